BEGIN
{
	@a = sum(1);
}

BEGIN
{
	@a = quantize(1);
}