BEGIN
{
	a = -7;
	b = 2;
	printf("%d %d %d %d %d %d\n", a / b, a % b, -a / b, -a % b, a / -b, a % -b);
	exit(0);
}
