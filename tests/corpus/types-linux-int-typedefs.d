/* The Linux kernel integer typedefs are D type names. */
BEGIN
{
	printf("%d %d %d %d\n", (u32)-1, (__u8)257, (s16)-1, sizeof (loff_t));
	exit(0);
}
