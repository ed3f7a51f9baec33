/* A function declared without a storage class is extern, as DTrace declares it: its prototype is checked, nothing is defined. */
void func(int, int);
int other(void);

BEGIN
{
	printf("declared\n");
	exit(0);
}
