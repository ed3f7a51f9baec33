#pragma D option errtags
/* Attributes for what is no identifier apply to nothing. */
void func(int, int);
#pragma D attributes Stable/Stable/Common func;

BEGIN
{
	exit(0);
}
