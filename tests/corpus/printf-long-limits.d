BEGIN
{
	printf("%ld %ld %lu\n", 9223372036854775807, -9223372036854775807 - 1, 0xffffffffffffffffUL);
	exit(0);
}
