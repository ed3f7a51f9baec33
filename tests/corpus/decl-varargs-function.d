extern int varargs1(...);
extern int varargs2(int, ...);

BEGIN
{
	printf("declared\n");
	exit(0);
}
