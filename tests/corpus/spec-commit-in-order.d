/* commit() prints the speculation's records in the order they were made,
 * after the records that were not speculative. */
BEGIN
{
	self->spec = speculation();
}

BEGIN
{
	speculate(self->spec);
	printf("first in speculation %d\n", self->spec);
}

BEGIN
{
	printf("not speculative\n");
}

BEGIN
{
	speculate(self->spec);
	printf("second\n");
	trace(42);
	printf("\n");
}

BEGIN
{
	commit(self->spec);
	self->spec = 0;
}

BEGIN
{
	exit(0);
}
