#pragma D option errtags
/* DTrace's lexer counts brackets: a closing one with none open. */
BEGIN
{
	trace(args[0]]);
}
