/*
 * An aggregation whose key and value are larger than aggsize never holds
 * a key: each update is an aggregation drop and nothing is printed
 * (illumos drops/drp.DTRACEDROP_AGGREGATION).
 */
#pragma D option strsize=1024
#pragma D option aggsize=512

BEGIN
{
	@["Harding"] = count();
	@["Hoover"] = count();
	@small[1] = count();
}

BEGIN
{
	exit(0);
}
