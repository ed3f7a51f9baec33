BEGIN
{
	printf("[%s]", dirname("/usr/lib/libc.so"));
}

BEGIN
{
	printf("[%s]", dirname("/usr/lib/"));
}

BEGIN
{
	printf("[%s]", dirname("usr"));
}

BEGIN
{
	printf("[%s]", dirname("/"));
}

BEGIN
{
	printf("[%s]", dirname("//"));
}

BEGIN
{
	printf("[%s]", dirname(""));
}

BEGIN
{
	printf("[%s]", dirname("a/b"));
}

BEGIN
{
	printf("[%s]", dirname("/a"));
}

BEGIN
{
	printf("[%s]", dirname("///a///b///"));
}

BEGIN
{
	printf("[%s]", dirname("."));
}

BEGIN
{
	printf("[%s]", dirname(".."));
}

BEGIN
{
	printf("[%s]", dirname("a//"));
}

BEGIN
{
	printf("\n");
	exit(0);
}
