/* Bit-fields in D structs, laid out as DTrace (CTF) lays them out: each
   starts at a byte, in an integer of the bytes its width needs; over kernel
   memory. */
struct bits {
	unsigned int a : 4;
	int b : 3;
	unsigned int c : 9;
	unsigned char d;
};

struct more {
	char x;
	unsigned int y : 30;
	unsigned int z : 4;
	unsigned int : 0;
	short w;
};

BEGIN
{
	s = (struct bits *)&curthread->comm;
	printf("%d %d %d %d %d %d\n", s->a, s->b, s->c, s->d, sizeof (struct bits), offsetof(struct bits, d));
	printf("%d %d\n", sizeof (struct more), offsetof(struct more, w));
	exit(0);
}
