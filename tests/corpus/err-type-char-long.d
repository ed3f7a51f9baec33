#pragma D option errtags

BEGIN
{
	i = (char long)0;
}
