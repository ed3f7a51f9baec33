/*
 * Thread-local and clause-local variables have namespaces of their own:
 * they may take a subroutine's name, which a global may not.
 */
self int index;

BEGIN
{
	self->index = 3;
	this->strstr = 4;
	printf("%d %d %d\n", self->index, this->strstr, index("abc", "c"));
	exit(0);
}
