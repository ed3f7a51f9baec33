BEGIN
{
	printf("[%s][%s][%s][%s]\n", substr("hello", 10), substr("hello", 5), substr("hello", 2, 0), substr("hello", -10));
	exit(0);
}
