BEGIN
{
	printf("%x %x %o\n", -1, -1L, 8);
	exit(0);
}
