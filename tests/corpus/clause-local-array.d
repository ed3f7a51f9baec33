/* A clause-local array: its elements are stored and read back in one clause. */
this short a[5];

BEGIN
{
	this->a[0] = 10;
	this->a[4] = 40;
	this->a[2] = this->a[0] + this->a[4];
	printf("%d %d %d\n", this->a[0], this->a[2], this->a[4]);
	exit(0);
}
