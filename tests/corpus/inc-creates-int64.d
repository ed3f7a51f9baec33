/* A variable ++ creates is an int64_t (codegen/tst.post_inc_gvar_val). */
BEGIN
{
	printf("%d %d\n", x++, sizeof (x));
	y--;
	printf("%d %d\n", y, sizeof (y));
	exit(0);
}
