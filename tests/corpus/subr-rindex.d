/* rindex(s, subs[, start]): the last position of subs at or before start. */
BEGIN
{
	printf("%d %d %d %d\n", rindex("hello", "l"), rindex("hello", "x"), rindex("abcabc", "abc"), rindex("aaaa", "aa"));
	printf("%d %d %d %d\n", rindex("abcabc", "abc", 2), rindex("abcabc", "abc", 3), rindex("abcabc", "abc", 100), rindex("abcabc", "abc", -1));
	printf("%d %d\n", rindex("", "a"), rindex("abcab", "b", 3));
	exit(0);
}
