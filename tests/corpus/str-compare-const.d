BEGIN
{
	printf("%d %d %d %d %d %d %d %d\n", "abc" == "abc", "abc" != "abd", "abc" < "abd", "abd" > "abc", "ab" < "abc", "" < "a", "b" >= "a", "a" <= "a");
	exit(0);
}
