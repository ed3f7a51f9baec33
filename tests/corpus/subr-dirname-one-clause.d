BEGIN
{
	printf("[%s]", dirname("/usr/lib/libc.so"));
	printf("[%s]", dirname("/usr/lib/"));
	printf("[%s]", dirname("usr"));
	printf("[%s]", dirname("/"));
	printf("[%s]", dirname("//"));
	printf("[%s]", dirname(""));
	printf("[%s]", dirname("a/b"));
	printf("[%s]", dirname("/a"));
	printf("[%s]", dirname("///a///b///"));
	printf("[%s]", dirname("."));
	printf("[%s]", dirname(".."));
	printf("[%s]", dirname("a//"));
	printf("\n");
	exit(0);
}
