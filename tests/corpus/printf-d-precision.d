BEGIN
{
	printf("[%.5d][%8.3d][%-8.3d]\n", 42, 42, 42);
	exit(0);
}
