/* A D program may not set what the preprocessor has already used
 * (dt_opt_cpp_opts' EDT_BADOPTCTX). */
#pragma D option incdir=/tmp
BEGIN
{
	exit(0);
}
