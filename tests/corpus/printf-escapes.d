BEGIN
{
	printf("a\tb\\c\"d\n");
	exit(0);
}
