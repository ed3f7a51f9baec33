BEGIN
{
	a = -9223372036854775807;
	printf("%d %d %d\n", a / 2, a % 10, -a / 3);
	exit(0);
}
