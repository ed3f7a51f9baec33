/* D arithmetic keeps 64-bit intermediates; a variable typed by its first
   assignment keeps all 64 bits, a declared one its type's size. (DTrace:
   dtrace-utils' arithmetic/tst.basics; tst.bug-casting, which expects C's
   narrowing of int + int, is marked xfail there: "broken DTrace integer
   model".) */
int x;
long long z;

BEGIN
{
	i = 100000;
	j = i * i / i;
	printf("%d\n", j);
	x = 1 << 30;
	z = x + x;
	printf("%x\n", z);
	k = 25920;
	k = k - (k + (k * 3) + k) * k / k * k;
	printf("%d %d\n", k, k / 4);
	x = k;
	printf("%d %d\n", x, x / 4);
	exit(0);
}
