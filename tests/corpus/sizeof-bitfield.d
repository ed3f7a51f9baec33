struct r { int a : 1; } v;

BEGIN
{
	trace(sizeof(v.a));
}
