/*
 * A string thread-local or associative array element that was never
 * assigned is a NULL string: comparing it works (it is not ""), but
 * recording its bytes (trace(), printf("%s")) loads from address 0, a
 * bad-address fault there (DTRACEFLT_BADADDR, arg5 0) as in DTrace
 * (tvar/tst.init-str, assocs/tst.init-str); the clause stops, tracing
 * goes on.
 */
#pragma D option quiet

self string s;
string a[int];

BEGIN
{
	printf("absent == NULL: %d\n", self->s == NULL);
	trace(self->s);
	printf("not reached\n");
}

BEGIN
{
	printf("%s\n", a[1]);
	printf("not reached\n");
}

BEGIN
{
	a[1] = "set";
	printf("%s\n", a[1]);
}

ERROR
{
	printf("fault %d (DTRACEFLT_BADADDR %d) at %d in clause %d\n", arg4, DTRACEFLT_BADADDR, arg5, arg2);
}

BEGIN
{
	exit(0);
}
