/*
 * dt_node_op1 folds the negation of an integer constant and cuts an
 * unsigned one to its type's size: -1u is 0xffffffff, so it equals
 * 4294967295 and not the 64-bit all-ones (dtrace-utils' io/tst.fds.d
 * finds ioctl(-1, ...) with `arg0 == -1u`). A cast of a constant is folded
 * the same way; ~ is not cut (illumos' BNEG keeps all 64 bits).
 */
#pragma D option quiet

BEGIN
{
	printf("%d %d\n", -1u == 4294967295, -1u == 0xffffffffffffffff);
	printf("%d %d\n", -(unsigned char)1 == 255, -(unsigned short)2 == 65534);
	printf("%d %d\n", -1 == 0xffffffffffffffff, ~0u == 0xffffffffffffffff);
	printf("%x %d\n", -1u, sizeof (-1u));
	exit(0);
}
