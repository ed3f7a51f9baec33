/*
 * lltostr(v[, base]) as illumos writes it: base 2 to 36 with digits 0-9a-z,
 * a sign in base 10 only (other bases show the 64 bits unsigned), "0x"
 * before base 16 digits and "0" before base 8 ones; another base is an
 * illegal operation.
 */
BEGIN
{
	printf("%s %s %s %s %s %s\n", lltostr(0), lltostr(-12), lltostr(255, 16), lltostr(0, 16),
	    lltostr(8, 8), lltostr(0, 8));
	printf("%s %s %s\n", lltostr(5, 2), lltostr(-1, 16), lltostr(71, 36));
}

BEGIN
{
	trace(lltostr(5, 37));
}

ERROR
{
	printf("fault %d\n", arg4 == DTRACEFLT_ILLOP);
	exit(0);
}
