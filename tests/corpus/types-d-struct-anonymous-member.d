/* Members of an anonymous union are the struct's own, laid out as DTrace
   (CTF) lays them out: nothing follows the last member. */
struct t {
	union {
		long a;
		int b;
	};
	char c;
};

BEGIN
{
	printf("%d %d %d %d\n", sizeof (struct t), offsetof(struct t, a), offsetof(struct t, b),
	    offsetof(struct t, c));
	t = (struct t *)curthread;
	printf("%d\n", t->b == *(int *)curthread);
	exit(0);
}
