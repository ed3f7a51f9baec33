/* chill(ns) spins for ns nanoseconds and the firing's timestamp is read
 * again after it (illumos dtrace_action_chill); one longer than the spin
 * allowed is an illegal operation (DTRACEFLT_ILLOP, 3), the clause stops
 * and tracing goes on. */
#pragma D option destructive

BEGIN
{
	t = timestamp;
	chill(200000);
	printf("%s\n", timestamp - t >= 200000 ? "chilled" : "not chilled");
}

BEGIN
{
	chill(1000000000);
	printf("not reached\n");
}

ERROR
{
	printf("a second's chill: fault %d in action %d\n", arg4, arg2);
}

BEGIN
{
	exit(0);
}
