BEGIN
{
	this->a = 3;
	this->b = 4;
}

BEGIN
/this->a * this->a + this->b * this->b == 25/
{
	this->c = 5;
	printf("%d %d %d\n", this->a, this->b, this->c);
}

BEGIN
{
	printf("sum %d\n", this->a + this->b + this->c);
	exit(0);
}
