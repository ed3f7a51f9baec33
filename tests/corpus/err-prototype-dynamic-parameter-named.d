#pragma D option errtags
/*
 * A prototype parameter of an associative array type is refused, named
 * (decls/err.D_DECL_PROTO_TYPE.Dyn).
 */
int a(int a[int]);

BEGIN
{
	exit(0);
}
