/* A struct's last member may be a flexible array (C's `type name[];`): no bytes of its own, its elements past the struct's end. */
struct env {
	uint64_t count;
	uint64_t values[];
};

BEGIN
{
	this->e = (struct env *)alloca(sizeof (struct env) + 2 * sizeof (uint64_t));
	this->e->count = 2;
	this->e->values[0] = 10;
	this->e->values[1] = 20;
	printf("%d %d %d\n", sizeof (struct env), this->e->values[1], offsetof(struct env, values));
	exit(0);
}
