BEGIN
{
	printf("%d %i %u %x %X %o\n", 255, 255, 255, 255, 255, 255);
	exit(0);
}
