BEGIN
{
	printf("%s %s\n", toupper("Hello, World 42!"), tolower("MiXeD-CaSe_9"));
	exit(0);
}
