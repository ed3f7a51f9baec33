#pragma D option errtags

/*
 * An action named as a value is a "tracing function" to DTrace
 * (dt_idkind_name), as aggregating functions and subroutines have their
 * kinds' names.
 */
BEGIN
{
	x = trace;
}
