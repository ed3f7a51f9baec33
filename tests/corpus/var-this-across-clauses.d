BEGIN
{
	this->x = 5;
}

BEGIN
{
	printf("%d\n", this->x + 1);
	exit(0);
}
