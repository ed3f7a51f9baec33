/* Memory that cannot be read is a fault, reported to ERROR as any bad
 * address is; the clause records nothing. */
BEGIN
{
	tracemem(0, 8);
	printf("not reached\n");
}

ERROR
{
	printf("fault %d at %d in action %d\n", arg4, arg5, arg2);
}

BEGIN
{
	exit(0);
}
