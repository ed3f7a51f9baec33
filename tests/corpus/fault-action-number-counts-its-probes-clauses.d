/*
 * "action #N" and ERROR's arg2 number the clauses of the probe that fired:
 * a BEGIN clause after an ERROR clause is 1 (dtrace-utils'
 * error/tst.clause_scope-begin), the next 2.
 */
#pragma D option quiet

ERROR
{
	printf("fault in action %d\n", arg2);
}

BEGIN
{
	trace(((struct task_struct *)NULL)->pid);
}

BEGIN
/ *(int *)8 == 0 /
{
	printf("not reached\n");
}

BEGIN
{
	exit(0);
}
