BEGIN
{
	trace($$2);
}