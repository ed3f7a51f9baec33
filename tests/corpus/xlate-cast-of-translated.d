BEGIN
{
	trace((uintptr_t)curpsinfo);
}
