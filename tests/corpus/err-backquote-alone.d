BEGIN
{
	trace(sizeof (`));
}
