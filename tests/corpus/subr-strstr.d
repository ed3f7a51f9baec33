/* strstr(s, subs): s from the first subs on; NULL (equal to "") if none. */
BEGIN
{
	printf("[%s][%s][%s][%s][%s]\n", strstr("hello world", "o"), strstr("hello world", "o w"), strstr("abc", "abc"),
	    strstr("abc", ""), strstr("aab", "ab"));
	printf("%d %d\n", strstr("abc", "x") == "", strstr("ab", "abc") == "");
	exit(0);
}
