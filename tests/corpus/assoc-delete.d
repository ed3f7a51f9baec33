BEGIN
{
	a[1] = 5;
	a[1] = 0;
	printf("%d ", a[1]);
	a[1] = 7;
	printf("%d\n", a[1]);
	exit(0);
}
