BEGIN
{
	x = 1;
	@q = quantize(x);
	@q = quantize(2);
	@q = quantize(3);
	exit(0);
}
