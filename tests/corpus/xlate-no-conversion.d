BEGIN
{
	trace(curpsinfo->pr_nosuch);
}
