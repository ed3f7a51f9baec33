BEGIN
{
	self->t = 7;
	self->t = 0;
}

BEGIN
{
	printf("%d\n", self->t);
	exit(0);
}
