/* D's declarations are laid out as CTF lays them out (ctf_add_member):
   a member starts at the first byte past the last one's bits, aligned for
   its type, a bit-field's type is an integer of the bytes its width needs
   (rounded to a power of two), and nothing follows the last member. The
   sizes are those illumos' and dtrace-utils' bitfields/tst.SizeofBitField
   require. */
struct bitRecord1 { int a : 1; } var1;
struct bitRecord2 { int a : 1; int b : 3; } var2;
struct bitRecord5 { int c : 12; int a : 10; int b : 3; } var5;
struct bitRecord6 { int a : 20; int b : 3; int c : 12; } var6;
struct bitRecord7 { long c : 32; long long d : 9; int e : 1; } var7;
struct bitRecord8 { char a : 2; short b : 12; long c : 32; } var8;
struct bitRecord12 { int a : 30; int b : 30; int c : 32; } var12;
struct tail { int a; char b; } tail;
union small { char c[3]; short s; } small;

BEGIN
{
	printf("%d %d %d %d %d %d %d\n", sizeof (var1), sizeof (var2),
	    sizeof (var5), sizeof (var6), sizeof (var7), sizeof (var8),
	    sizeof (var12));
	printf("%d %d %d\n", sizeof (tail), offsetof(struct tail, b),
	    sizeof (small));
	var6.a = -1;
	var6.b = 3;
	var6.c = 2047;
	printf("%d %d %d\n", var6.a, var6.b, var6.c);
	exit(0);
}
