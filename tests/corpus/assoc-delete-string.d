BEGIN
{
	s[1] = "x";
	s[1] = NULL;
	printf("%d\n", s[1] == NULL);
	exit(0);
}
