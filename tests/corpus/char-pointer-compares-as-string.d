/* A char pointer or array compared with a string compares the strings (string-compatible types). */
char *s;

BEGIN
{
	s = "abc";
	printf("%d %d %d %d\n", s == "abc", "abd" > s, s != "abc", curthread->comm == "dtrace");
	exit(0);
}
