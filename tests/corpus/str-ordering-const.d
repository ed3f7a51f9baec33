BEGIN
{
	printf("%d %d %d %d %d\n", "abc" < "abd", "abc" > "ab", "" < "a", "B" < "a", "abc" <= "abc");
	exit(0);
}
