BEGIN
{
	a[1] = 10;
	a[2] = 20;
	printf("%d %d %d\n", a[1], a[2], a[1] + a[2]);
	exit(0);
}
