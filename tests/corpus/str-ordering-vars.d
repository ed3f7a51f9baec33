BEGIN
{
	this->a = "apple";
	this->b = "banana";
	printf("%d %d %d %d\n", this->a < this->b, this->a >= this->b, this->a <= this->a, this->b != this->a);
	exit(0);
}
