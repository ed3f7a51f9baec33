#pragma D option errtags
BEGIN
{
	pid += 1;
}
