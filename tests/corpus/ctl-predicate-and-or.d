BEGIN
/1 && 0/
{
	printf("and\n");
}

BEGIN
/1 || 0/
{
	printf("or\n");
}

BEGIN
/0 ^^ 1/
{
	printf("xor\n");
}

BEGIN
{
	exit(0);
}
