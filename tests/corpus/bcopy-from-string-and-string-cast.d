/*
 * A string passes for a pointer argument (bcopy's source), and a pointer to
 * D memory cast to string is the string there (dtrace-utils'
 * tst.conv_s_alloca_var).
 */
BEGIN
{
	s = alloca(10);
	bcopy(probename, s, 5);
	printf("'%s'\n", (string)s);
	exit(0);
}
