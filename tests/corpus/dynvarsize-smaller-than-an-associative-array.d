/*
 * An associative array whose element cannot fit in dynvarsize at all is
 * refused when tracing would start, as Oracle's DTrace refuses it
 * (dtrace-utils assocs/err.dynvarsize-too-small).
 */
#pragma D option dynvarsize=15

BEGIN
{
	a[1] = 1;
	exit(0);
}
