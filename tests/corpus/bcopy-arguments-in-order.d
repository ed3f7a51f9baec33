/*
 * bcopy()'s arguments are evaluated in the order written, as DTrace
 * evaluates a subroutine's arguments (dtrace-utils'
 * funcs/bcopy/tst.bcopy_arg_order): src + 2, dst + 3, 4 bytes.
 */
#pragma D option quiet

BEGIN
{
	src = (char *)alloca(8);
	dst = (char *)alloca(8);
	src[0] = 'a'; src[1] = 'b'; src[2] = 'c'; src[3] = 'd';
	src[4] = 'e'; src[5] = 'f'; src[6] = 'g'; src[7] = 'h';
	dst[0] = dst[1] = dst[2] = dst[3] = dst[4] = dst[5] = dst[6] = dst[7] = '.';
	n = 2;
	bcopy((void *)(src + (n++)), (void *)(dst + (n++)), (n++));
	printf("%c%c%c%c%c%c%c%c\n", dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], dst[7]);
	exit(0);
}
