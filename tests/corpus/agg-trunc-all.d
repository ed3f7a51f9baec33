BEGIN
{
	@c["a"] = count();
	@c["b"] = count();
	trunc(@c);
	printa("%s %@d\n", @c);
	printf("done\n");
	exit(0);
}
