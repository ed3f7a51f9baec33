unsigned int a, b;

BEGIN
{
	a = 3;
	b = 5;
	printf("%u %d %x\n", a - b, a - b, a - b);
	exit(0);
}
