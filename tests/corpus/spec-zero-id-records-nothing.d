/* Speculation 0 (a failed speculation()) may be passed to speculate(),
 * commit() and discard(); it records nothing. */
BEGIN
{
	speculate(0);
	printf("never\n");
}

BEGIN
{
	commit(0);
	discard(0);
}

BEGIN
{
	printf("done\n");
	exit(0);
}
