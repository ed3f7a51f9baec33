BEGIN
{
	@q = quantize(4);
	printa(@q);
	printf("after\n");
	exit(0);
}
