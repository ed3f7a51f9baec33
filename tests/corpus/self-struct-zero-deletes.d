/*
 * 0 stored in a thread-local struct deletes it, as 0 deletes any dynamic
 * variable (dtrace-utils' tvar/tst.store_zero_deletes_struct): it reads
 * as zeros again.
 */
#pragma D option quiet

this struct {
	int a;
} val;

BEGIN
{
	this->val.a = 7;
	self->s = this->val;
	printf("%d ", self->s.a);
	self->s = 0;
	printf("%d\n", self->s.a);
	exit(0);
}
