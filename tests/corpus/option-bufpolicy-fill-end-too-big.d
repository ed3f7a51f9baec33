/*
 * A fill buffer must hold END's records: DTrace refuses to start when
 * they exceed it ("END enablings exceed size of principal buffer").
 */
#pragma D option bufpolicy=fill
#pragma D option bufsize=8

END
{
	printf("%d %d\n", 1, 2);
}
