/* dtrace-utils' pointers/err.D_OP_INCOMPAT.VoidPointerArith. */
void *p;

BEGIN
{
	trace((int)(p + 1));
}
