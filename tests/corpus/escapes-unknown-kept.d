/*
 * DTrace's stresc2chr() knows \a \b \f \n \r \t \v \" \\, octal and \x:
 * any other escape, \? and \' included, keeps its backslash. A character
 * constant of more than four characters is a long.
 */
BEGIN
{
	printf("%d %d %d\n", '\?', '\'', 'a\bcdefgh' > 0xffffffff);
	printf("%s|%s\n", "a\?b", "c\'d");
	exit(0);
}
