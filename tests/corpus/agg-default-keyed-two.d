BEGIN
{
	@a["k"] = count();
	@b[2] = sum(6);
	@b[1] = sum(8);
	exit(0);
}
