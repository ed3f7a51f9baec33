/*
 * cleanpath(s): illumos DTrace's walk removes "//" and "/./" and takes
 * "/.." back to the last '/' written; a relative first name stays.
 * (Two probes: each clause's program is verified on its own.)
 */
BEGIN
{
	printf("%s\n", cleanpath("/a//b/./c/../d"));
	printf("%s\n", cleanpath("/a/b/.."));
	printf("%s\n", cleanpath("/a/b/../"));
	printf("%s\n", cleanpath("a/../b"));
	printf("%s\n", cleanpath("a/.."));
	printf("%s\n", cleanpath("/foo/..bar/.x/..."));
	exit(0);
}

END
{
	printf("%s\n", cleanpath("/a/./"));
	printf("%s\n", cleanpath("//"));
	printf("[%s]\n", cleanpath(""));
	printf("%s\n", cleanpath("/a/b/../../.."));
	printf("%s\n", cleanpath("/x/../../y"));
}
