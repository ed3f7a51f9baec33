#pragma D option quiet

BEGIN
{
	@ = lquantize(1, 0, 4, 1, 1);
	@ = lquantize(2, 0, 4, 1, 3);
	printa(@);
	setopt("aggzoom");
	printa(@);
	exit(0);
}
