/*
 * A kernel type's array member is bounded too: lwpsinfo_t's pr_name has
 * 16 bytes (dtrace-utils' err.D_ARR_BOUNDS.ctf).
 */
BEGIN
{
	trace(curlwpsinfo->pr_name[256]);
	exit(0);
}
