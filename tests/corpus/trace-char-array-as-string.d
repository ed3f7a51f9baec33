/*
 * trace() of a char array prints it as a string when its bytes are
 * printable up to a NUL and only NULs follow (DTrace's dt_print_bytes),
 * else as raw bytes.
 */
char n[9];
char m[4];

BEGIN
{
	n[0] = 'a'; n[1] = 'A'; n[2] = 'b'; n[3] = 'B';
	n[4] = 'c'; n[5] = 'C'; n[6] = 'd'; n[7] = 'D';
	trace(n);
	printf("\n");
	m[0] = 'x'; m[2] = 'y';
	trace(m);
	exit(0);
}
