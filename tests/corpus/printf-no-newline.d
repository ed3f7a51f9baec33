BEGIN
{
	printf("no newline");
	exit(0);
}
