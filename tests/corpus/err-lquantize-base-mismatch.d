BEGIN
{
	@l = lquantize(1, 0, 10);
	@l = lquantize(1, 5, 10);
}