/* copyout()'s buffer is a void *, which a string passes as (its
 * characters' address); its address is a uintptr_t, which a string does
 * not (dtrace-utils funcs/err.D_PROTO_ARG.copyoutbadarg). */
BEGIN
{
	copyout("not_void_*", "not_uinptr_t", "not_size_t");
	exit(0);
}
