/*
 * The floating-point types have their C sizes on x86-64.
 */
BEGIN
{
	printf("%d %d %d\n", sizeof (float), sizeof (double), sizeof (long double));
	exit(0);
}
