/*
 * Storing 0 in an associative array's struct element deletes it, as 0
 * deletes any dynamic variable (dtrace-utils'
 * assocs/tst.store_zero_deletes_struct): it then reads as zeroes.
 */
#pragma D option quiet

struct pair {
	int a;
	int b;
};

this struct pair val;

BEGIN
{
	this->val.a = 1;
	this->val.b = 2;
	a[1] = this->val;
	this->val.a = 3;
	a[2] = this->val;
	a[1] = 0;
	printf("%d %d %d\n", a[1].a, a[1].b, a[2].a);
	exit(0);
}
