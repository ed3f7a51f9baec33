string s;

BEGIN
{
	printf("[%s]\n", s);
	s = "now";
	printf("[%s]\n", s);
	exit(0);
}
