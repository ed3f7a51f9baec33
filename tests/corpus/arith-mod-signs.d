BEGIN
{
	printf("%d %d %d %d %d\n", 7 % -3, -7 % 3, -7 % -3, 7 % 3, -8 / 3);
	exit(0);
}
