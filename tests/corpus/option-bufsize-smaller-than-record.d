/*
 * A record larger than the buffer (a 4-byte EPID and a string of
 * strsize 64) cannot be enabled: DTrace's E2BIG.
 */
#pragma D option bufsize=32
#pragma D option strsize=64

BEGIN
{
	trace(execname);
	exit(0);
}
