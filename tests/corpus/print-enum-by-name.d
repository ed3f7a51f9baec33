/* print() shows an enum value by its enumerator's name (its number when none has it), after its type. */
enum fruit {
	apple,
	pear = 5,
	plum
};

BEGIN
{
	print(pear);
	printf("\n");
	print((enum fruit)6);
	printf("\n");
	print((enum fruit)2);
	printf("\n%d %d\n", plum, sizeof (enum fruit));
	exit(0);
}
