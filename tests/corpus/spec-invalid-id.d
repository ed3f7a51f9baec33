/*
 * commit() and discard() of an ID past nspec, or negative, are illegal
 * operations (the ERROR probe fires, tracing goes on); ID 0 is nothing.
 */
#pragma D option nspec=8

BEGIN
{
	commit(1024);
}

BEGIN
{
	discard(-1);
}

BEGIN
{
	discard(0);
	commit(0);
}

BEGIN
{
	printf("end\n");
	exit(0);
}

ERROR
{
	printf("fault %d\n", arg4 == DTRACEFLT_ILLOP);
}
