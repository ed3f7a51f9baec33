/* arg4 of ERROR is DTrace's fault kind (DTRACEFLT_*). */
BEGIN
{
	x = 0;
	y = 1 / x;
}

BEGIN
{
	trace(*(int *)0);
}

ERROR
{
	printf("%d %d\n", arg4 == DTRACEFLT_DIVZERO, arg4 == DTRACEFLT_BADADDR);
}

BEGIN
{
	exit(0);
}
