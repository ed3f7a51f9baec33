/* Bit-fields are assignable: the storage unit is read, the field's bits
   replaced and the unit written back (dtrace-utils'
   bitfields/tst.BasicSigned). */
struct flags {
	int a : 3;
	unsigned int b : 5;
	int c : 12;
} f;

BEGIN
{
	f.a = 3;
	f.b = 31;
	f.c = -5;
	printf("%d %d %d\n", f.a, f.b, f.c);
	f.a = -1;
	f.b += 2;
	f.c++;
	printf("%d %d %d\n", f.a, f.b, f.c);
	exit(0);
}
