#pragma D option errtags

BEGIN
{
	trace(sizeof (void));
}
