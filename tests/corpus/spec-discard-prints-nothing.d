BEGIN
{
	self->spec = speculation();
}

BEGIN
{
	speculate(self->spec);
	printf("discarded\n");
}

BEGIN
{
	discard(self->spec);
	printf("kept\n");
}

BEGIN
{
	exit(0);
}
