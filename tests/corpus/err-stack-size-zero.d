#pragma D option errtags
/* A constant frame count below one: the same words as ustack()'s. */
BEGIN
{
	stack(0);
}
