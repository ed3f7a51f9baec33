#pragma D option errtags
/* A newline in a string: reported on the line after it, where the lexer is. */
BEGIN
{
	s = "ab
";
}
