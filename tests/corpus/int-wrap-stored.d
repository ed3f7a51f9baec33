int i;
unsigned int u;
unsigned char c;

BEGIN
{
	i = 2147483647;
	i++;
	u = 0;
	u--;
	c = 250;
	c += 10;
	printf("%d %u %d\n", i, u, c);
	exit(0);
}
