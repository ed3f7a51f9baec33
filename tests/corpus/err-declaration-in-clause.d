#pragma D option errtags
/* D has no declarations among a clause's statements. */
BEGIN
{
	int i = 0;
	exit(0);
}
