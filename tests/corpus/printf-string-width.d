BEGIN
{
	printf("[%s][%10s][%-10s][%.3s]\n", "abc", "abc", "abc", "abcdef");
	exit(0);
}
