BEGIN
{
	c["k"]++;
	c["k"]++;
	++c["k"];
	c["k"] += 10;
	printf("%d\n", c["k"]);
	exit(0);
}
