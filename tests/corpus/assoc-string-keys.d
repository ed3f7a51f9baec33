BEGIN
{
	c["x"] = 1;
	c["y"] = 2;
	c["x"] += 10;
	printf("%d %d\n", c["x"], c["y"]);
	exit(0);
}
