#pragma D option strsize=8

/*
 * A string literal longer than strsize is cut to it, as every D string.
 */
BEGIN
{
	x = "abcdefghijkl";
	printf("%s %d\n", x, strlen(x));
	exit(0);
}
