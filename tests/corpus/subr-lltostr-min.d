BEGIN
{
	printf("%s\n", lltostr(-9223372036854775807 - 1));
	exit(0);
}
