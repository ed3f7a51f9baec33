/* An empty subs: the start clamped to [0, strlen(s)], the end by default. */
BEGIN
{
	printf("%d %d %d %d %d\n", rindex("abc", ""), rindex("abc", "", 1), rindex("abc", "", 9), rindex("abc", "", -4), rindex("", ""));
	exit(0);
}
