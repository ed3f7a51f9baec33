/* An int expression is an int: x + x overflows into the sign, and widening
   it to long long sign-extends (dtrace-utils' casting rules). */
int x;
long long z;

BEGIN
{
	x = 1 << 30;
	z = x + x;
	printf("%x\n", z);
	z = 1;
	z <<= 32;
	printf("%x\n", (x + x) & z);
	exit(0);
}
