enum color { RED, GREEN = 5, BLUE, BLACK = -1 };

BEGIN
{
	printf("%d %d %d %d %d\n", RED, GREEN, BLUE, BLACK, BLUE * 2 + RED);
	exit(0);
}
