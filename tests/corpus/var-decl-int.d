int x;

BEGIN
{
	printf("%d\n", x);
	exit(0);
}
