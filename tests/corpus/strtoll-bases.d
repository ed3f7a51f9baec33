/* strtoll() as illumos reads numbers: blanks, a sign, 0x in base 16. */
BEGIN
{
	printf("%d %d %d %d %d %d %d\n", strtoll("123"), strtoll("  -42x"), strtoll("0x1f", 16),
	    strtoll("777", 8), strtoll("zz", 36), strtoll(""), strtoll("+9223372036854775807"));
	exit(0);
}
