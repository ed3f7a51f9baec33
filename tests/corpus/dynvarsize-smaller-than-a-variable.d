/*
 * When dynvarsize cannot hold one element, every store into a thread-local
 * variable or associative array is a dynamic variable drop and the
 * variable stays unset (dtrace-utils drops/drp.DTRACEDROP_DYNAMIC.local_only).
 */
#pragma D option dynvarsize=15

BEGIN
{
	self->a = 1;
	a["x"] = 2;
	self->s = "text";
	printf("%d %d [%s]\n", self->a, a["x"], self->s);
	exit(0);
}
