int a[int, ...];

BEGIN
{
	exit(0);
}
