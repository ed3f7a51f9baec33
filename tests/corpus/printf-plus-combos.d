BEGIN
{
	printf("%+5d|%-+5d|%+05d\n", 7, 7, 7);
	printf("[%+.3d][%-+7.2d][%07d]\n", 5, 3, -42);
	exit(0);
}
