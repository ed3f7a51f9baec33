BEGIN
{
	@l = lquantize(25, 0, 100, 10);
	@l = lquantize(27, 0, 100, 10);
	@l = lquantize(41, 0, 100, 10);
	exit(0);
}
