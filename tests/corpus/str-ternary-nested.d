BEGIN
{
	x = 5;
	s = x > 3 ? (x > 4 ? "big" : "mid") : "small";
	t = x < 3 ? "small" : x == 5 ? "five" : "other";
	printf("%s %s\n", s, t);
	exit(0);
}
