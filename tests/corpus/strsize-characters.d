#pragma D option strsize=5

/*
 * strsize is the most characters a string holds: every string operation
 * stops there, and sizeof (string) is strsize.
 */
BEGIN
{
	trace("abcdefgh");
	printf("|%s|%d|%d|%s|%d|\n", strjoin("abc", "defgh"), strlen(strjoin("abc", "defgh")),
	    sizeof (string), lltostr(1234567), strlen(probeprov));
	exit(0);
}
