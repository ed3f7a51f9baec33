/*
 * DTrace's lexer replaces macro arguments as it meets them: a missing one
 * is reported before the checks that come after parsing (here print()'s
 * argument count).
 */
BEGIN
{
	print("The arguments are %d %d\n", $1, $2);
	exit(0);
}
