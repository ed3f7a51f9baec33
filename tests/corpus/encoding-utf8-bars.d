#pragma D option encoding=utf8

BEGIN
{
	@ = lquantize(1, 0, 4, 1, 1);
	@ = lquantize(2, 0, 4, 1, 2);
	exit(0);
}
