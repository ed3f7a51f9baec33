#pragma D option errtags
/* Without -C a C preprocessor directive is no D control line
 * (dt_pragma's D_PRAGCTL_INVAL): not silently skipped. */
#define X 1

BEGIN
{
	trace(X);
	exit(0);
}
