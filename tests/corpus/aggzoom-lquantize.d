#pragma D option aggzoom

BEGIN
{
	@ = lquantize(1, 0, 4, 1, 1);
	@ = lquantize(2, 0, 4, 1, 3);
	exit(0);
}
