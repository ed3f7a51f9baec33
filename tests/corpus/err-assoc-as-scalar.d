#pragma D option errtags

BEGIN
{
	a[0] = 1;
	trace(sizeof (a));
}
