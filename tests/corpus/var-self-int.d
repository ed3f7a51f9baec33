BEGIN
{
	self->x = 1;
	self->x += 2;
	self->x++;
	printf("%d\n", self->x);
	exit(0);
}
