struct s {
	int a;
};

struct s x;

BEGIN
{
	trace(x->a);
}
