BEGIN
{
	x = 1;
	s = x > 0 ? "yes" : "no";
	t = x < 0 ? "yes" : "no";
	printf("%s %s %s\n", s, t, x == 1 ? "one" : "other");
	exit(0);
}
