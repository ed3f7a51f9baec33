#pragma D option errtags
/* bcopy() and copyinto() write alloca()'d memory: their destination is a pointer. */
BEGIN
{
	copyinto(1, 2, 3);
}
