/*
 * An empty subs is found at the start clamped to [0, strlen(s)], as Perl's
 * index() does (illumos dtrace.c keeps Perl's rules).
 */
BEGIN
{
	printf("%d %d %d %d %d\n", index("abc", ""), index("abc", "", 2), index("abc", "", 7), index("abc", "", -1), index("", ""));
	exit(0);
}
