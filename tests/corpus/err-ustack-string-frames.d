#pragma D option errtags
/* ustack(uint32_t, uint32_t): a string fails the prototype before the constant checks. */
BEGIN
{
	ustack(1, "forty");
}
