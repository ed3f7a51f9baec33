BEGIN
{
	trace((unsigned unsigned int)arg0);
}
