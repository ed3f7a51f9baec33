/*
 * A record larger than the buffer (12 bytes of header and a string of
 * strsize 64) cannot be enabled: DTrace's E2BIG.
 */
#pragma D option bufsize=32
#pragma D option strsize=64

BEGIN
{
	trace(execname);
	exit(0);
}
