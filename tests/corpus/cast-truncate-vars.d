BEGIN
{
	a = 300;
	b = 200;
	c = 70000;
	d = 40000;
	e = 4294967297;
	f = -1;
	printf("%d %d %d %d %d %d %d %u\n", (char)a, (unsigned char)a, (char)b, (short)c, (unsigned short)c, (short)d, (int)e, (unsigned int)f);
	exit(0);
}
