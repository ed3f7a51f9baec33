int p;

BEGIN
{
	p -= alloca(10);
}
