BEGIN
{
	self->n = 5;
}

BEGIN
{
	self->n *= 2;
}

BEGIN
{
	printf("%d\n", self->n);
	exit(0);
}
