/*
 * Reads through an alloca()'d pointer must stay in what the clause
 * reserved, as dtrace-utils checks them (funcs/alloca/err.alloca-load-*):
 * below it, past its end, or in a pointer kept from another clause's
 * alloca() are bad-address faults; bcopy() from it too (err.badbcopy7).
 * Reads inside it are not.
 */
#pragma D option quiet

BEGIN
{
	s = (char *)alloca(15);
	s[14] = 'z';
	printf("%c\n", s[14]);
}

BEGIN
{
	s = (char *)alloca(15);
	trace(s[-1]);
}

BEGIN
{
	s = (char *)alloca(15);
	trace(s[16]);
}

BEGIN
{
	trace(*s);
}

BEGIN
{
	d = alloca(20);
	t = alloca(10);
	bcopy(t, d, 20);
}

ERROR
{
	printf("fault %d (DTRACEFLT_BADADDR %d) in %d\n", arg4, DTRACEFLT_BADADDR, arg2);
}

BEGIN
{
	exit(0);
}
