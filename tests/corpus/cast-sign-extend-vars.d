BEGIN
{
	m1 = -1;
	big = 200;
	printf("%d %d %d %d\n", (long)(char)m1, (unsigned long)(char)m1, (long)(unsigned char)m1, (long)(signed char)big);
	exit(0);
}
