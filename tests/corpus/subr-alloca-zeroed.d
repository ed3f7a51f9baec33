/* alloca() memory starts zeroed, whatever an earlier clause left there. */
BEGIN
{
	this->p = alloca(16);
	bcopy(curthread->comm, this->p, 16);
}

BEGIN
{
	this->q = alloca(16);
	printf("%d %d\n", *(uint64_t *)this->q, *((uint64_t *)this->q + 1));
	exit(0);
}
