/* print() names a struct declared through a typedef by the typedef (CTF keeps it). */
typedef struct {
	int a;
	char b;
} pair_t;

BEGIN
{
	this->p = (pair_t *)alloca(sizeof(pair_t));
	this->p->a = 1;
	this->p->b = 'x';
	print(*this->p);
	exit(0);
}
