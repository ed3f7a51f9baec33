BEGIN
{
	printf("%#x %#o %#X %#x\n", 255, 8, 255, 0);
	exit(0);
}
