/* proc:::exit's reasons, as signal.d defines them (sys/siginfo.h). */
BEGIN
{
	printf("%d %d %d %d %d %d\n", CLD_EXITED, CLD_KILLED, CLD_DUMPED, CLD_TRAPPED, CLD_STOPPED, CLD_CONTINUED);
	exit(0);
}
