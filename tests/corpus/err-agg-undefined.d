BEGIN
{
	trace(@never + 3);
}
