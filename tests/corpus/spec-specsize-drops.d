/* A record that would take the speculation past specsize is dropped; the
 * records before it are still committed. */
#pragma D option specsize=40

BEGIN
{
	self->spec = speculation();
}

BEGIN
{
	speculate(self->spec);
	printf("%d\n", 1);
}

BEGIN
{
	speculate(self->spec);
	printf("%d\n", 2);
}

BEGIN
{
	commit(self->spec);
}

BEGIN
{
	exit(0);
}
