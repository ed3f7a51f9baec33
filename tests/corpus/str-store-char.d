/* A char of a clause-local or global string, or of alloca() memory, may be written. */
BEGIN
{
	this->s = "hello";
	this->s[0] = 'j';
	g = "world";
	g[4] = '\0';
	this->a = (char *)alloca(4);
	this->a[0] = 'o';
	*(this->a + 1) = 'k';
	this->a[2] = 0;
	printf("%s %s %s\n", this->s, g, stringof(this->a));
	exit(0);
}
