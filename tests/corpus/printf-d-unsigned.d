BEGIN
{
	printf("%d %d %d\n", (unsigned int)-1, (uint64_t)-1, (unsigned char)255);
	exit(0);
}
