/* With nspec=2, a third speculation() finds none free and returns 0. */
#pragma D option nspec=2

BEGIN
{
	printf("%d %d %d\n", speculation(), speculation(), speculation());
	exit(0);
}
