BEGIN
{
	x = 5;
	y = x++;
	printf("%d %d ", x, y);
	z = ++x;
	printf("%d %d ", x, z);
	w = x--;
	printf("%d %d ", x, w);
	v = --x;
	printf("%d %d\n", x, v);
	exit(0);
}
