BEGIN
{
	s[1] = "x";
	s[1] = NULL;
	printf("[%s]\n", s[1]);
	exit(0);
}
