BEGIN
{
	@l = lquantize(5, 0, 100, 10);
	@l = lquantize(15, 0, 100, 10);
	@l = lquantize(15, 0, 100, 10);
	@l = lquantize(95, 0, 100, 10);
	@l = lquantize(150, 0, 100, 10);
	exit(0);
}
