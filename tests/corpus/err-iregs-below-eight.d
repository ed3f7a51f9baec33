/*
 * Fewer than BPF's eight registers cannot generate code
 * (options/tst.iregs).
 */
#pragma D option iregs=7

BEGIN
{
	exit(0);
}
