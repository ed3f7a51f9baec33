#pragma D option errtags
/* ustack(uint32_t, ...): a frame count that is no integer fails the prototype before the constant checks. */
BEGIN
{
	ustack("forty");
}
