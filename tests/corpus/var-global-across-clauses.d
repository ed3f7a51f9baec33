BEGIN
{
	x = 1;
}

BEGIN
{
	x++;
}

BEGIN
{
	x *= 10;
	printf("%d\n", x);
	exit(0);
}
