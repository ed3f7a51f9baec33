/*
 * curcpu is a pointer; cast to an integer it is a number arithmetic takes
 * (dtrace-utils' arithmetic/tst.cast-curcpu.d shifts it).
 */
#pragma D option quiet

BEGIN
{
	val = ((int64_t)curcpu) >> 8;
	printf("%d\n", val != 0);
	exit(0);
}

ERROR
{
	exit(1);
}
