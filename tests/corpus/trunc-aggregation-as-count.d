/* trunc()'s second argument is a scalar: an aggregation there is
 * D_TRUNC_SCALAR (illumos aggs/err.D_TRUNC_SCALAR.bad). */
BEGIN
{
	@[0] = count();
	trunc(@, @);
	exit(1);
}
