BEGIN
{
	s = "";
	printf("[%s] %d %d %d\n", s, strlen(s), s == "", s < "a");
	exit(0);
}
