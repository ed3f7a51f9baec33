/* index(s, subs[, start]): the first position of subs at or after start. */
BEGIN
{
	printf("%d %d %d %d\n", index("hello", "ll"), index("hello", "l"), index("hello", "x"), index("hello", "hello!"));
	printf("%d %d %d %d\n", index("abcabc", "bc", 2), index("abcabc", "bc", -5), index("abc", "c", 3), index("abc", "c", 100));
	printf("%d %d\n", index("", "a"), index("aaab", "aab"));
	exit(0);
}
