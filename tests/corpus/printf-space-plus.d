BEGIN
{
	printf("[% d][% d][%+ d]\n", 42, -42, 42);
	exit(0);
}
