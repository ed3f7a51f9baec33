/* void as a parameter must be the only one (dt_decl_prototype). */
int foo(int, void);

BEGIN
{
	exit(0);
}
