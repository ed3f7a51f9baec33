#pragma D option errtags
int *p;
BEGIN
{
	p->a = 1;
}
