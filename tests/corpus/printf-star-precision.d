BEGIN
{
	printf("[%.*s][%*.*d]\n", 2, "abcdef", 8, 3, 5);
	exit(0);
}
