/*
 * A clause whose record (a 4-byte EPID and a string of strsize 64) is
 * larger than the buffer never fits: each firing is a drop and the clause
 * does nothing, as dtrace_probe reserves the record before anything else
 * (illumos drops/drp.DTRACEDROP_PRINCIPAL); the program is enabled.
 */
#pragma D option bufsize=32
#pragma D option strsize=64

BEGIN
{
	trace(execname);
	x = 1;
}

BEGIN
{
	printf("%d\n", x);
	exit(0);
}
