BEGIN
{
	printf("[%s][%s]\n", substr("hello", 0, -2), substr("hello", 1, -10));
	exit(0);
}
