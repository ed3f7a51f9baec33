#pragma D option errtags

BEGIN
{
	printf("%s %*d\n", "foo");
}
