/* #pragma D error: the words, each followed by a space (dt_pragma_error). */
#pragma D error "this is an error message"

BEGIN
{
	exit(0);
}
