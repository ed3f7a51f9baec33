BEGIN
{
	x = 10;
	printf("%d ", x += 5);
	printf("%d ", x -= 3);
	printf("%d ", x *= 4);
	printf("%d ", x /= 5);
	printf("%d ", x %= 5);
	printf("%d ", x <<= 3);
	printf("%d ", x >>= 2);
	printf("%d ", x |= 3);
	printf("%d ", x &= 6);
	printf("%d\n", x ^= 7);
	exit(0);
}
