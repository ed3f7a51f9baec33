#pragma D option errtags
/* A variable holds alloca()'d memory or other memory, never both (dtrace-utils' D_ALLOCA_INCOMPAT). */
BEGIN
{
	a = (char *)alloca(1);
}

BEGIN
{
	b = (char *)curthread;
	a = NULL;
	a = b + 5;
}
