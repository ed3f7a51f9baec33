BEGIN
{
	@c["a"] = count();
	printa(@c);
	printf("after\n");
	exit(0);
}
