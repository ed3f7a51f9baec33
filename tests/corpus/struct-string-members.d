/* A string member of a D struct holds its characters in place: stored and read in associative-array elements, globals, thread-locals and alloca() memory. */
struct cmd {
	string str;
	int n;
};

struct cmd c[int];
struct cmd g;
self struct cmd t;

BEGIN
{
	c[1].str = "element";
	c[1].n = 1;
	g.str = "global";
	self->t.str = "thread";
	this->p = (struct cmd *)alloca(sizeof (struct cmd));
	this->p->str = "alloca";
	printf("%s %d %s %s %s %d\n", c[1].str, c[1].n, g.str, self->t.str, this->p->str, strlen(c[1].str));
	exit(0);
}
