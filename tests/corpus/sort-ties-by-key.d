BEGIN
{
	@c[3] = count();
	@c[1] = count();
	@c[2] = count();
	@c["z" == "z" ? 0 : 9] = count();
	printa("%d ", @c);
	printf("\n");
	exit(0);
}
