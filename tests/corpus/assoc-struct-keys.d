/* A struct may key an associative array: equal structs are one key, different ones two. */
struct pair {
	int a;
	char c;
};

struct pair p, q;

BEGIN
{
	p.a = 1; p.c = 'x';
	q.a = 1; q.c = 'x';
	v[p] = 10;
	v[q] += 5;
	q.c = 'y';
	v[q] = 7;
	printf("%d %d\n", v[p], v[q]);
	exit(0);
}
