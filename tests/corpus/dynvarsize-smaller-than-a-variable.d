/*
 * When dynvarsize cannot hold one value of a thread-local variable (the
 * thread is its key: only the value counts, as in dtrace-utils'
 * tvar/tst.load_no_alloc), every store into it is a dynamic variable drop
 * and the variable stays unset; an integer fits in 15 bytes, a string of
 * strsize does not. An associative array that cannot hold one element is
 * refused instead (dynvarsize-smaller-than-an-associative-array).
 */
#pragma D option dynvarsize=15

BEGIN
{
	self->a = 1;
	self->s = "text";
	printf("%d %d\n", self->a, self->s == NULL);
	exit(0);
}
