/* BEGIN fires in dtrace itself: its comm is "dtrace", NUL-padded. */
BEGIN
{
	tracemem(&curthread->comm, 16);
	exit(0);
}
