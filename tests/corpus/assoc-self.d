BEGIN
{
	self->a[1] = 3;
	self->a[2] = 4;
	printf("%d %d\n", self->a[1] + self->a[2], self->a[3]);
	exit(0);
}
