BEGIN
{
	printf("%c%c%c%c", 'a', '\t', 'b', '\n');
	exit(0);
}
