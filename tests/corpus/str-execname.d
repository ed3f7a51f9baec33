BEGIN
{
	printf("%d %d %s\n", execname == "dtrace", execname != "dtrace", execname);
	exit(0);
}
