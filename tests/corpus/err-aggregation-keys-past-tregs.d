/*
 * tregs sizes the tuple registers Oracle's code generator passes an
 * aggregation's keys in (options/tst.tregs): seven keys need seven.
 */
#pragma D option tregs=5

BEGIN
{
	@[1, 2, 3, 4, 5, 6, 7] = count();
}
