/* A storage class alone declares an int; ipl exists (0 on Linux). */
self x;
this y;

BEGIN
{
	self->x = 2;
	this->y = 3;
	printf("%d %d %d\n", self->x, this->y, ipl);
	exit(0);
}
