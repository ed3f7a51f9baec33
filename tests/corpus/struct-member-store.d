/* Members of D structs in global, clause-local and alloca() memory are assignable. */
struct s {
	int x;
	char c;
};

struct s g;
this struct s t;

BEGIN
{
	g.x = 1;
	g.c = 'g';
	this->t.x = 2;
	this->p = (struct s *)alloca(sizeof (struct s));
	this->p->x = 3;
	this->p->x += 4;
	printf("%d %c %d %d\n", g.x, g.c, this->t.x, this->p->x);
	exit(0);
}
