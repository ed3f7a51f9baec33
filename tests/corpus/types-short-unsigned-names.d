/*
 * The short unsigned type names of Solaris' sys/types.h and Linux's
 * linux/types.h (uint, ulong, ushort, u_char, u_int32_t, ...) are types.
 */
BEGIN
{
	printf("%d %d %d %d\n", sizeof(uint), sizeof(u_char), sizeof(ushort), sizeof(u_long));
	printf("%d %d\n", (uint)-1 == 4294967295, (ushort)-1 == 65535);
	exit(0);
}
