#pragma D option errtags
BEGIN
{
	a = (char *)alloca(1);
	a = (a == NULL) ? (char *)50 : a;
}
