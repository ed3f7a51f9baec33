BEGIN
{
	printf("[%s][%s][%s][%s][%s]\n", strchr("a=b=c", '='), strrchr("a=b=c", '='), strchr("abc", 'x'), strrchr("abc", 'a'), strchr("abc", 'c'));
	exit(0);
}
