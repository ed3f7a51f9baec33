BEGIN
{
	@q = quantize(-5);
	@q = quantize(-100);
	exit(0);
}
