/*
 * Enabled probe IDs and action numbers as dtrace-utils gives them when it
 * links one program per probe: 1 is its own ERROR enabling, then ERROR's
 * clauses, then BEGIN's, then END's, then the others, each in script order
 * (error/tst.errorend: ERROR, END, then the faulting BEGIN clause, which is
 * enabled probe 3). The action number is the clause's place among the
 * clauses of its probe: the END clause before does not count.
 */
#pragma D option quiet

ERROR
{
	printf("fault: enabled probe %d, action %d\n", arg1, arg2);
}

END
{
	printf("END is enabled probe %d\n", epid);
}

BEGIN
{
	printf("BEGIN is enabled probe %d\n", epid);
}

BEGIN
{
	*(char *)NULL;
}

BEGIN
{
	exit(0);
}
