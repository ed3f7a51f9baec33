BEGIN
{
	printf("[%s][%s][%s]\n", "a\\b", "q\"q", "t\tt");
	exit(0);
}
