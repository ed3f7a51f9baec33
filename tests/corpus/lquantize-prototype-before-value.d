/* DTrace checks a call against its prototype, lquantize(@, int32_t,
 * int32_t, ...), before it checks the value aggregated (illumos
 * aggs/err.D_PROTO_ARG.lquantizetoofew). */
BEGIN
{
	@a[pid] = lquantize(probefunc, probefunc, probefunc, probefunc);
}
