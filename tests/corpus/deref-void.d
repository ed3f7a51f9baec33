BEGIN
{
	trace(*(void *)curthread);
}
