/* printm(size, addr), FreeBSD's: size bytes at a pointer, as tracemem() prints them. */
BEGIN
{
	this->p = (char *)alloca(20);
	this->p[0] = 'A';
	this->p[1] = 'B';
	this->p[17] = 0x7f;
	printm(20, this->p);
	exit(0);
}
