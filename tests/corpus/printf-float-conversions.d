/*
 * printf's %e, %E, %f, %g and %G take float and double values (D has no
 * floating-point arithmetic, but it has the types: an unassigned variable
 * is 0.0), as dtrace-utils' tst.conv_{e,E,f,g,G}_{float,double}.
 */
float f;
double d;

BEGIN
{
	printf("%e %E %f %g %G\n", f, f, f, f, f);
	printf("%e %E %f %g %G\n", d, d, d, d, d);
	printf("[%10.3f] [%-8.1e]\n", d, f);
	exit(0);
}
