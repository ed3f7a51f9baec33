#pragma D option errtags
/* A predicate's closing slash with a parenthesis open, on the line of the token after it. */
BEGIN
/rand(/
{
	trace(epid);
}
