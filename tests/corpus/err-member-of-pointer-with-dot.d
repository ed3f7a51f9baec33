#pragma D option errtags
/* dt_cook_op2's words for . and -> on what is not a struct, union or pointer to one. */
struct pair { int i; };
struct pair *f;
BEGIN
{
	f.i = 10;
}
