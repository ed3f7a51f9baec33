/*
 * strtok(s, delim) then strtok(NULL, delim): each call skips delimiters and
 * returns the token up to the next one; the delimiters may change between
 * calls. With no token left the result is NULL (equal to "").
 */
BEGIN
{
	printf("[%s]", strtok("/usr/lib//libc.so/", "/"));
	printf("[%s]", strtok(NULL, "/"));
	printf("[%s]", strtok(NULL, "./"));
	printf("[%s]", strtok(NULL, "/"));
	printf("[%d]\n", strtok(NULL, "/") == "");
	printf("[%s][%s][%d]\n", strtok("abc", ""), strtok("x,,y", ","), strtok(",,,", ",") == "");
}

/* The position is kept across the clauses of one firing. */
BEGIN
{
	x = strtok("a=b=c", "=");
}

BEGIN
{
	printf("%s %s %s\n", x, strtok(NULL, "="), strtok(NULL, "="));
	exit(0);
}
