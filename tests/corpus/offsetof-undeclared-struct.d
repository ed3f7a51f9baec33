BEGIN
{
	trace(offsetof(struct no_such_type, x));
}
