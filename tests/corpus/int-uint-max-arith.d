BEGIN
{
	x = 4294967295;
	printf("%d %d %u\n", x + 1, x * 2, (unsigned int)(x + 1));
	exit(0);
}
