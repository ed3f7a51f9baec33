BEGIN
{
	printf("[%*d][%*s]\n", 6, 42, 8, "abc");
	exit(0);
}
