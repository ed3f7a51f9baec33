int a[3], b[3];

BEGIN
{
	b = a;
}
