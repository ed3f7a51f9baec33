BEGIN
{
	s = "hello";
	t = "help";
	printf("%d %d %d %d %d %d\n", s == t, s != t, s < t, s > t, s <= "hello", t >= "hello");
	exit(0);
}
