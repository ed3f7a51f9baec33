#pragma D option errtags

struct bits {
	int a : 1;
	int b : 3;
} var;

BEGIN
{
	trace(&var.b);
}
