/* With bufresize=manual an aggregation buffer smaller than aggsize asks
 * is refused (illumos buffering/err.resize2). */
#pragma D option bufresize=manual
#pragma D option aggsize=100t

BEGIN
{
	@a[probeprov] = count();
	exit(0);
}
