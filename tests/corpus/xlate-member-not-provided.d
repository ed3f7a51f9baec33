BEGIN
{
	trace(curpsinfo->pr_rssize);
}
