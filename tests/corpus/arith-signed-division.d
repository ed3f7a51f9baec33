BEGIN
{
	printf("%d %d %d\n", 7 / 2, -7 / 2, -7 % 2);
	exit(0);
}
