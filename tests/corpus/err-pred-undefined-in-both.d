#pragma D option errtags
/*
 * An identifier undefined in the predicate and in the actions: the
 * predicate's error is reported (clauses/err.D_IDENT_UNDEF.both).
 */
BEGIN
/x != 0/
{
	exit(x);
}
