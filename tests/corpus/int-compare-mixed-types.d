BEGIN
{
	printf("%d %d %d %d %d\n", (unsigned char)200 > (char)100, (char)-1 < (unsigned char)1, -1L < 1UL, -1 < 1L, 0x80000000 > 0);
	exit(0);
}
