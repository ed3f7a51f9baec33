/* dt_cook_op2's cast rules: a value casts to its own type (a struct to
   itself, as dtrace-utils' translators/tst.TransNonPointer does) and
   anything casts to void. */
struct s { int a; char c; };
struct s x;

BEGIN
{
	x.a = 10;
	x.c = 'c';
	printf("%d %c\n", ((struct s)x).a, ((struct s)x).c);
	(void)x.a;
	(void)0;
	exit(0);
}
