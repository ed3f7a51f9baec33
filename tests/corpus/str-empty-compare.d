BEGIN
{
	e = "";
	printf("%d %d %d %d\n", e == "", e != "x", strlen(e), strjoin(e, "x") == "x");
	exit(0);
}
