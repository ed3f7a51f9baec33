/*
 * trace() of a whole struct prints its bytes as DTrace prints raw data
 * (dt_print_bytes): all printable and no NUL, they are taken for a string,
 * printed "  %-33s" even when quiet; else as a dump of bytes.
 */
struct six {
	char c[4];
	short s;
};
struct six x;

BEGIN
{
	trace(*(struct six *)&curthread->comm);
	printf("|\n");
	x.c[0] = 'a';
	x.s = 0x0102;
	trace(x);
	exit(0);
}
