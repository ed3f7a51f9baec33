/* Structs and unions declared in D: members aligned as C
   aligns them, nothing after the last (CTF's layout), and a cast over
   kernel memory. */
struct pair {
	char c;
	long l;
	short s[3];
};

union either {
	int i;
	char bytes[12];
};

struct name16 {
	char text[16];
};

BEGIN
{
	printf("%d %d %d %d\n", sizeof (struct pair), offsetof(struct pair, l),
	    offsetof(struct pair, s), sizeof (union either));
	n = (struct name16 *)&curthread->comm;
	printf("%s %c\n", n->text, n->text[1]);
	exit(0);
}
