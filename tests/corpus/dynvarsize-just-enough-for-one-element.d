/*
 * DTrace counts an element's key and value against dynvarsize when it
 * decides whether one fits: at 20 bytes an int-keyed int array holds its
 * element (dtrace-utils' assocs/tst.store_zero_safe), and storing 0 in
 * absent elements needs no room.
 */
#pragma D option dynvarsize=20
#pragma D option quiet

BEGIN
{
	a[1] = 1;
	a[2] = 0;
	a[3] = 0;
	printf("%d %d %d\n", a[1], a[2], a[3]);
	exit(0);
}
