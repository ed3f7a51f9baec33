/* Pointer arithmetic and indexing over a kernel char array. */
BEGIN
{
	p = &curthread->comm[0];
	printf("%c %c %c %c\n", p[0], *(p + 1), *(2 + p), curthread->comm[3]);
	printf("%d %d\n", (p + 5) - p, (p + 5) - (p + 1));
	printf("%s %s\n", stringof(p + 2), stringof(curthread->comm + 3));
	exit(0);
}
