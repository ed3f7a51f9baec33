BEGIN
{
	printf("[%s][%s][%s][%s]\n", substr("hello world", 6), substr("hello", 1, 3), substr("hello", 4, 100), substr("hello", 0));
	exit(0);
}
