BEGIN
{
	@l = lquantize(-7, -10, 10, 5);
	@l = lquantize(-3, -10, 10, 5);
	@l = lquantize(-3, -10, 10, 5);
	@l = lquantize(2, -10, 10, 5);
	exit(0);
}
