/* A struct can point to its own type inside its declaration (12
   bytes: DTrace's records end with their last member). */
struct node {
	struct node *next;
	int value;
};

BEGIN
{
	n = (struct node *)curthread;
	printf("%d %d %d\n", sizeof (struct node), offsetof(struct node, value), n->next == n->next);
	exit(0);
}
