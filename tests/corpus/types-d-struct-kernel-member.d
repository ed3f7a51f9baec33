/* A kernel struct inside a D struct is aligned as its members need (as gcc lays it out). */
struct s {
	int x;
	struct in6_addr a;
};

BEGIN
{
	printf("%d %d\n", offsetof(struct s, a), sizeof (struct s));
	exit(0);
}
