/* The dynamic size picks how many of the copied bytes are shown; 0, or
 * more than were copied, shows them all. */
BEGIN
{
	tracemem(&curthread->comm, 16, 3);
	tracemem(&curthread->comm, 8, 0);
	tracemem(&curthread->comm, 4, 100);
	exit(0);
}
