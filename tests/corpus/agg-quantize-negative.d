BEGIN
{
	@q = quantize(-1);
	@q = quantize(0);
	@q = quantize(5);
	exit(0);
}
