/* dtrace-utils' inline/err.D_DECL_IDRED.redef1: an inline defined twice. */
inline int foo = timestamp;
inline int foo = 8;

BEGIN
{
	exit(0);
}
