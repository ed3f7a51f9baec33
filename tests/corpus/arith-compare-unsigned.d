BEGIN
{
	printf("%d %d %d %d\n", -1 < 0u, -1 > 0u, -1L < 0u, (unsigned char)255 > (char)-1);
	exit(0);
}
