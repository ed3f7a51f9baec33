/*
 * A global may not take the name of a subroutine or action of the D
 * version compiled for (D_DECL_IDRED); strstr() came with D 1.1.
 */
int strstr;

BEGIN
{
	exit(0);
}
