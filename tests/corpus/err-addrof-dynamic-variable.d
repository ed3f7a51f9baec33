#pragma D option errtags

int i;
int *p;

BEGIN
{
	p = &i;
}
