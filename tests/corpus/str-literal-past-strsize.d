#pragma D option strsize=8

/*
 * A string literal longer than strsize is cut to it, as every D string:
 * strsize is the most characters a string holds (illumos copies strsize
 * bytes of a string, dtrace-utils strsize characters and a NUL).
 */
BEGIN
{
	x = "abcdefghijkl";
	printf("%s %d\n", x, strlen(x));
	exit(0);
}
