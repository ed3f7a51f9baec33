#pragma D option errtags

BEGIN
{
	i = (long short)0;
}
