BEGIN
{
	printf("100%% %d%%|%%d|%s%%\n", 5, "x");
	exit(0);
}
