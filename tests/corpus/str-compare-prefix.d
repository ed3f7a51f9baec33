BEGIN
{
	printf("%d %d %d\n", "abc" > "ab", "abc" < "abcd", "B" < "a");
	exit(0);
}
