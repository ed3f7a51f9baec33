#pragma D option aggpack
#pragma D option encoding=ascii

BEGIN
{
	@x = quantize(1 << 32);
	@neg = lquantize(-10, -10, 20, 1, -1);
	@neg = lquantize(-5, -10, 20, 1, 1);
	@neg = lquantize(0, -10, 20, 1, 1);
	exit(0);
}
