/* A struct member may point to a function (`void (*g)()`): D cannot call it, so it is an address. */
struct ops {
	int n;
	void (*handler)(int);
};

BEGIN
{
	this->o = (struct ops *)alloca(sizeof (struct ops));
	this->o->handler = (void *)0x1234;
	printf("%d %x\n", sizeof (struct ops), (uint64_t)this->o->handler);
	exit(0);
}
