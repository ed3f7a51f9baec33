/*
 * A size reaching past alloca() memory is dtrace-utils' invalid-size fault
 * (DTRACEFLT_BADSIZE, 10) with the size as arg5 (copyinto/err.badsize:
 * "invalid size (0x41)"); an address outside it stays a bad address.
 */
#pragma D option quiet

BEGIN
{
	p = (char *)alloca(64);
	copyinto(curthread->mm->env_start, 65, p);
	printf("not reached\n");
}

ERROR
{
	printf("fault %d (DTRACEFLT_BADSIZE %d) size %d\n", arg4, DTRACEFLT_BADSIZE, arg5);
}

BEGIN
{
	exit(0);
}
