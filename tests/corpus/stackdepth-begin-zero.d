/*
 * BEGIN and END fire in dtrace itself, in no traced kernel code: their
 * stack is empty (stackdepth 0), as DTrace's.
 */
BEGIN
{
	printf("%d\n", stackdepth);
	exit(0);
}

END
{
	printf("%d\n", stackdepth);
}
