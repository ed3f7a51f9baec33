/* trace() of a whole struct prints its bytes as DTrace prints raw data. */
struct six {
	char c[4];
	short s;
};

BEGIN
{
	trace(*(struct six *)&curthread->comm);
	exit(0);
}
