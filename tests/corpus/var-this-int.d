BEGIN
{
	this->a = 3;
	this->b = this->a * this->a;
	printf("%d %d\n", this->a, this->b);
	exit(0);
}
