BEGIN
{
	s = "hello";
	printf("%d %d %d %d\n", strlen(""), strlen(s), strlen(strjoin(s, " world")), strlen("a\tb"));
	exit(0);
}
