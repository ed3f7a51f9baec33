/*
 * An associative array key of more than eight elements does not fit
 * DTrace's tuple registers.
 */
BEGIN
{
	a[0, 1, 2, 3, 4, 5, 6, 7, 8] = 0;
}
