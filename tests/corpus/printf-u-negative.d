BEGIN
{
	printf("%u %u %u\n", -1, -1L, (char)-1);
	exit(0);
}
