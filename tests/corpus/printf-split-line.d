BEGIN
{
	printf("a");
	printf("b");
	printf("%s\n", "c");
	exit(0);
}
