/* D computes in 64-bit registers: an int expression narrows only where it
   is stored, recorded or cast, not between operators. */
int i;

BEGIN
{
	i = 2147483647;
	printf("%d %d %d\n", i + 1 > i, (i + 1) / 2, i * 4 / 8);
	j = i + 1;
	printf("%d %d\n", j, (int)(i + 1));
	exit(0);
}
