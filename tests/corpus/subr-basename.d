BEGIN
{
	printf("[%s]", basename("/usr/lib/libc.so"));
}

BEGIN
{
	printf("[%s]", basename("/usr/lib/"));
}

BEGIN
{
	printf("[%s]", basename("usr"));
}

BEGIN
{
	printf("[%s]", basename("/"));
}

BEGIN
{
	printf("[%s]", basename("//"));
}

BEGIN
{
	printf("[%s]", basename(""));
}

BEGIN
{
	printf("[%s]", basename("a/b"));
}

BEGIN
{
	printf("[%s]", basename("/a"));
}

BEGIN
{
	printf("[%s]", basename("///a///b///"));
}

BEGIN
{
	printf("[%s]", basename("."));
}

BEGIN
{
	printf("[%s]", basename(".."));
}

BEGIN
{
	printf("[%s]", basename("a//"));
}

BEGIN
{
	printf("\n");
	exit(0);
}
