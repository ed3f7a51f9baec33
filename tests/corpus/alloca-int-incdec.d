/* Integers in alloca() memory take ++ and op= like variables. */
BEGIN
{
	this->p = (int *)alloca(2 * sizeof (int));
	this->p[1]++;
	this->p[1] += 41;
	*this->p = -1;
	printf("%d %d\n", this->p[0], this->p[1]);
	exit(0);
}
