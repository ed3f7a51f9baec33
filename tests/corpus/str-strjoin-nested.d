BEGIN
{
	printf("%s\n", strjoin(strjoin("a", "b"), strjoin("c", strjoin("", "d"))));
	exit(0);
}
