#pragma D option errtags

BEGIN
{
	@a = count();
	trace(&@a);
}
