/* errno.d and signal.d: Linux's numbers under their usual names. */
BEGIN
{
	printf("%d %d %d %d %d\n", EPERM, EINTR, EACCES, EAGAIN, ETIMEDOUT);
	printf("%d %d %d %d\n", SIGINT, SIGKILL, SIGTERM, SIGCHLD);
	exit(0);
}
