/*
 * An index computed at run time is checked against the array's size too:
 * past the end (or negative) is dtrace-utils' DTRACEFLT_BADINDEX fault
 * (11) with the index as arg5, for reads and stores, of D arrays and of
 * kernel types' array members alike (tst.declared-bounds.runtime_out);
 * the clause stops there and tracing goes on.
 */
#pragma D option quiet

int a[5];

BEGIN
{
	i = 4;
	a[i] = 7;
	printf("a[4] = %d\n", a[i]);
}

BEGIN
{
	i = 8;
	a[i] = 12345678;
	printf("not reached\n");
}

BEGIN
{
	i = -1;
	printf("%d\n", a[i]);
}

BEGIN
{
	i = 16;
	printf("%d\n", curlwpsinfo->pr_name[i]);
}

ERROR
{
	printf("fault %d (DTRACEFLT_BADINDEX %d) index %d in clause %d\n", arg4, DTRACEFLT_BADINDEX, (int)arg5, arg2);
}

BEGIN
{
	exit(0);
}
