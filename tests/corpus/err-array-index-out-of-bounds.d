/*
 * A constant index past a declared array's end is D_ARR_BOUNDS at compile
 * time (dtrace-utils' err.D_ARR_BOUNDS.declared).
 */
int a[5];

BEGIN
{
	trace(a[5]);
	exit(0);
}
