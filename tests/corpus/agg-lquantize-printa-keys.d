BEGIN
{
	@l["a"] = lquantize(1, 0, 4, 1);
	@l["b"] = lquantize(2, 0, 4, 1);
	@l["b"] = lquantize(2, 0, 4, 1);
	printa("%s:%@d\n", @l);
	exit(0);
}
