/*
 * A pointer to the current process's memory may be followed without
 * copyin(), as DTrace's loads read the user memory the kernel maps
 * (dtrace-utils' types/tst.struct2 reads `e64->e1` of pr_envp): the first
 * environment pointer is not NULL, and the string it points to is read
 * with copyinstr(). An address mapped nowhere is still a fault.
 */
#pragma D option quiet

struct env {
	uint64_t first;
};

BEGIN
{
	e = (struct env *)curpsinfo->pr_envp;
	printf("%d %d\n", e->first != 0, strlen(copyinstr(e->first)) > 0);
}

BEGIN
{
	trace(*(int *)8);
}

ERROR
{
	printf("fault %d at %d\n", arg4, arg5);
	exit(0);
}
