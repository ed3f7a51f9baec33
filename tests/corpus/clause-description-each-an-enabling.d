/*
 * Each probe description of a clause is an enabling of its own, as in
 * DTrace: a probe two of them match runs the clause twice per firing.
 */
BEGIN,
BEGIN
{
	n++;
}

BEGIN
{
	printf("%d\n", n);
	exit(0);
}
