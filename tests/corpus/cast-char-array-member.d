/*
 * A char array member converts to a pointer as its address, as in C: the
 * cast and &a[0] agree, and the pointer reads back as the string.
 */
BEGIN
{
	printf("%d %d %s\n", (uintptr_t)curthread->comm == (uintptr_t)&curthread->comm[0],
	    stringof((char *)curthread->comm) == execname, strstr((char *)curthread->comm, "race"));
	exit(0);
}
