/* Solaris' synchronization object types and process flags are defined for
 * ported scripts (dtrace-utils demo/sched/whatfor.d, whosteal.d);
 * pr_stype is always SOBJ_NONE here. */
BEGIN
{
	printf("%d %d %d %d\n", SOBJ_MUTEX, SOBJ_SHUTTLE, PR_IDLE, PR_MSFORK);
	printf("%s\n", curlwpsinfo->pr_stype == SOBJ_NONE ? "none" : "other");
	exit(0);
}
