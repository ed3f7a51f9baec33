BEGIN
{
	this->s = "hello world";
	self->t = "thread";
	g = "global";
	trace(this->s);
	trace("|");
	trace(self->t);
	trace("|");
	trace(g);
	trace("\n");
	exit(0);
}
