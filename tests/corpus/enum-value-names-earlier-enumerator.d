/* An enumerator's value may use the enumerators before it. */
enum colors { RED = 1, GREEN = RED + 1, BLUE, WHITE = BLUE * 2 };

BEGIN
{
	printf("%d %d %d %d\n", RED, GREEN, BLUE, WHITE);
	exit(0);
}
