BEGIN
{
	c = (char)100;
	d = c + c;
	s = (short)-300;
	l = s * 1000;
	printf("%d %d\n", d, l);
	exit(0);
}
