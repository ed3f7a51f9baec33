BEGIN
{
	x = 1;
	x = x + 41;
	printf("%d\n", x);
	exit(0);
}
