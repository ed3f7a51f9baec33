BEGIN
{
	printf("x");
	speculate(1);
}
