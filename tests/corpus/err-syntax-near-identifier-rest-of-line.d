/*
 * A syntax error at an identifier shows the rest of its line, as
 * DTrace's lexer leaves it in the token's text after looking ahead
 * (typedef/err.D_SYNTAX.BadExistingTypedef).
 */
typedef pint new_int;

BEGIN
{
	exit(0);
}
