/* 0 is a null pointer or string wherever one is expected. */
BEGIN
{
	self->s = "set";
	self->s = 0;
	g = "set";
	g = 0;
	this->p = (char *)0;
	q = 1 ? this->p : 0;
	q = 0;
	r = 0 ? 0 : (int *)8;
	printf("%d %d %d %d\n", self->s == NULL, g == NULL, (long)q, (long)r);
	exit(0);
}
