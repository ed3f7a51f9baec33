#pragma D option errtags

/*
 * An error about the operator that ends a predicate is on the line of the
 * token after the closing slash: DTrace reduces it once its lexer has read
 * past the slash (types/err.D_OP_INT.badbitop). An identifier keeps its own.
 */
BEGIN
/"char" & "foo"/
{
	exit(1);
}
