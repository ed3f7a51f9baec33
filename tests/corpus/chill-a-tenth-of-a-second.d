/* DTrace lets a CPU chill up to half a second (dtrace_chill_max): a
 * tenth of a second in one chill() waits that long (illumos
 * funcs/tst.chill chills 100 ms at a time). */
#pragma D option destructive

BEGIN
{
	t = timestamp;
	chill(100000000);
	printf("%s\n", timestamp - t >= 100000000 ? "chilled" : "not chilled");
	exit(0);
}
