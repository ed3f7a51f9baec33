BEGIN
{
	printf("%d %d %d %d %d %d %d\n", 1 && 0, 0 || 2, 1 ^^ 0, 2 ^^ 3, !5, !0, !!7);
	exit(0);
}
