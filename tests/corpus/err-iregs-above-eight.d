/*
 * DIF has eight integer registers: iregs cannot be more
 * (options/err.iregs).
 */
#pragma D option iregs=9

BEGIN
{
	exit(0);
}
