BEGIN
{
	printf("%d %d %d %d %d %d\n", sizeof (char), sizeof (short), sizeof (int), sizeof (long), sizeof (long long), sizeof (string));
	exit(0);
}
