BEGIN
{
	printf("%d %d %d %d %d\n", (char)100 + (char)100, (short)30000 + (short)30000, (unsigned char)200 * 2, 100000 * 100000L, (char)-1 * (unsigned char)255);
	exit(0);
}
