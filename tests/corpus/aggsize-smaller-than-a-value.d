/*
 * An aggsize too small for even one aggregation value is refused when
 * tracing would start (dtrace-utils aggs/err.aggsize-too-small); one that
 * only a key is too large for is a drop at each update
 * (aggsize-smaller-than-a-key-drops).
 */
#pragma D option aggsize=8

BEGIN
{
	@ = count();
	exit(0);
}
