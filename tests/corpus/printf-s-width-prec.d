BEGIN
{
	printf("[%10.2s][%-10.2s]\n", "hello", "hello");
	exit(0);
}
