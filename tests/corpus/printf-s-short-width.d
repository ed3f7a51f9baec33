BEGIN
{
	printf("[%5s][%.1s][%-3s|][%s]\n", "toolong", "xyz", "", "");
	exit(0);
}
