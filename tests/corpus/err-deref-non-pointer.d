#pragma D option errtags
int x;
BEGIN
{
	b = *x;
}
