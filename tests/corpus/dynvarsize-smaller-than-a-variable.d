/*
 * When dynvarsize cannot hold one element, every store into a thread-local
 * variable is a dynamic variable drop and the variable stays unset
 * (dtrace-utils drops/drp.DTRACEDROP_DYNAMIC.local_only). An associative
 * array that cannot hold one element is refused instead
 * (dynvarsize-smaller-than-an-associative-array).
 */
#pragma D option dynvarsize=15

BEGIN
{
	self->a = 1;
	self->s = "text";
	printf("%d [%s]\n", self->a, self->s);
	exit(0);
}
