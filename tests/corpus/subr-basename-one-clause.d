BEGIN
{
	printf("[%s]", basename("/usr/lib/libc.so"));
	printf("[%s]", basename("/usr/lib/"));
	printf("[%s]", basename("usr"));
	printf("[%s]", basename("/"));
	printf("[%s]", basename("//"));
	printf("[%s]", basename(""));
	printf("[%s]", basename("a/b"));
	printf("[%s]", basename("/a"));
	printf("[%s]", basename("///a///b///"));
	printf("[%s]", basename("."));
	printf("[%s]", basename(".."));
	printf("[%s]", basename("a//"));
	printf("\n");
	exit(0);
}
