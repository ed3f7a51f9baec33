BEGIN
{
	printf("%d %d %d %d %d %d\n", 010, 0777, 'A', '\n', '\0', 0x1F);
	exit(0);
}
