/* The address one past an array's last element may be taken, as in C (pointers/tst.ArrayPointer1); reading it stays out of range. */
int a[5];

BEGIN
{
	p = &a[5];
	q = &a[3];
	printf("%d\n", (int)p - (int)q);
	exit(0);
}
