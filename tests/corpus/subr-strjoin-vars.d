BEGIN
{
	a = "foo";
	self->b = "bar";
	this->c = strjoin(a, self->b);
	printf("%s %d\n", strjoin(this->c, "!"), strlen(this->c));
	exit(0);
}
