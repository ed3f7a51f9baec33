#pragma D option errtags

BEGIN
{
	copyinstr(1, "2");
}
