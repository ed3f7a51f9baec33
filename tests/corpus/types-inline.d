inline int LIMIT = 10 * 2;
inline string GREETING = "hello";
inline int64_t MYPID = pid;

BEGIN
{
	printf("%d %s %d %d\n", LIMIT + 1, GREETING, MYPID == pid, sizeof (LIMIT));
	exit(0);
}
