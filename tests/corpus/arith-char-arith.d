BEGIN
{
	c = 'a';
	printf("%d %c %c\n", c + 1, c + 1, c - 32);
	exit(0);
}
