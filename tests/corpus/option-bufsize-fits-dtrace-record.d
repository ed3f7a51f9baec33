/*
 * A buffer is checked against records as DTrace sizes them (a 4-byte
 * EPID, an int as 4): a printf of an int and exit() fit in 32 bytes
 * (dtrace-utils' buffering/tst.switch1.d uses that size).
 */
#pragma D option bufsize=32

int i;

BEGIN
{
	printf("%d\n", i);
	exit(0);
}
