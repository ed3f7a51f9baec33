/* Global fixed-size arrays, indexed by constants and variables. */
int a[3];
char c[8];

BEGIN
{
	i = 2;
	a[0] = 1;
	a[i] = 7;
	a[i - 1]++;
	c[0] = 'h';
	c[1] = 'i';
	printf("%d %d %d %d %s\n", a[0], a[1], a[2], sizeof (a), stringof(c));
	exit(0);
}
