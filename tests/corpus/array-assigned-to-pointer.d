/* An array assigned to a pointer is the address of its first element. */
int a[3];
int *p;

BEGIN
{
	a[0] = 7;
	a[2] = 9;
	p = a;
	printf("%d %d %d\n", *p, p[2], p == &a[0]);
	exit(0);
}
