/* alloca() memory filled by bcopy() from kernel memory. */
BEGIN
{
	this->p = alloca(16);
	bcopy(curthread->comm, this->p, 7);
	printf("%s %c\n", stringof(this->p), ((char *)this->p)[1]);
	this->q = (int *)alloca(sizeof (int) * 2);
	bcopy(&curthread->tgid, this->q, sizeof (int));
	printf("%d\n", *this->q == pid);
	exit(0);
}
