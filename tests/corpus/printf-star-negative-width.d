BEGIN
{
	printf("[%*d][%*s]\n", -6, 42, -5, "ab");
	exit(0);
}
