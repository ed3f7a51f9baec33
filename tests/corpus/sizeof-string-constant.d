/* A string constant's size is its characters and the NUL, as in C; a string variable's is strsize (sizeof/tst.SizeofStrConst). */
BEGIN
{
	printf("%d %d %d\n", sizeof ("hi"), sizeof (""), sizeof (execname));
	exit(0);
}
