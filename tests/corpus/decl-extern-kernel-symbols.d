/*
 * extern declares the type of a kernel symbol (variables, arrays of
 * unknown size, functions and pointers to them), as in DTrace: the
 * declarations compile and the program runs.
 */
extern int e8, *e1, **e2;
extern unsigned long long e17;
extern struct inode e22;
extern int a1[];
extern int a3[123][456];
extern int getint(void);
extern int *(*funcptr)(void);
extern int twoparms(int, int);

BEGIN
{
	printf("ok\n");
	exit(0);
}
