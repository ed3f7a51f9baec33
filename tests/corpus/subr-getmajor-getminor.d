BEGIN
{
	d = (259 << 20) | 7;
	printf("%d %d %d %d %d %d\n", getmajor(0x800001), getminor(0x800001), getmajor(d), getminor(d), getmajor(0xfffff), getminor(0xfffff));
	exit(0);
}
