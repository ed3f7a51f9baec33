int i;
short s;

BEGIN
{
	printf("%d %d %d %d %d %d\n", sizeof (i), sizeof (s), sizeof (1), sizeof (1L), sizeof (i + 1L), sizeof (s + s));
	exit(0);
}
