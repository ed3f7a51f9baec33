BEGIN
{
	@c[1] = sum(10);
	@c[2] = sum(20);
	@c[3] = sum(30);
	trunc(@c, 1);
	exit(0);
}
