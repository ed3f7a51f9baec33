BEGIN
{
	u = (unsigned int)-7;
	printf("%u %u %u\n", u / 2, u % 10, u / 4294967295u);
	exit(0);
}
