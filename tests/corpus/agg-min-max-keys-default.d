BEGIN
{
	@m["lo"] = min(-1);
	@m["lo"] = min(-7);
	@m["hi"] = min(3);
	exit(0);
}
