BEGIN
{
	printf("[%s][%s][%s][%s][%s]\n", substr("hello", -3), substr("hello", -2, 1), substr("hello", -5, 2), substr("hello", -10, 7), substr("hello", -6, 2));
	exit(0);
}
