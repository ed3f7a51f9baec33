#pragma D option errtags

BEGIN
{
	i = (char int)0;
}
