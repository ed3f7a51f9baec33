/* A struct named before it is defined is a forward declaration: pointers to it are fine, and its definition completes it. */
typedef struct later later_t;

struct holder {
	int a;
	later_t *next;
};

struct later {
	int value;
};

BEGIN
{
	this->h = (struct holder *)alloca(sizeof (struct holder));
	this->l = (later_t *)alloca(sizeof (later_t));
	this->l->value = 42;
	this->h->next = this->l;
	printf("%d %d\n", this->h->next->value, sizeof (struct holder));
	exit(0);
}
