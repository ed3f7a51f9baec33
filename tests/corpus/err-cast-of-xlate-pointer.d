#pragma D option errtags
/* A cast of xlate<T *>'s value; the statement has no ';', so the cast is reduced at the '}' (line 11). */
struct in { int i; };
struct out { int o; };
translator struct out < struct in *p > { o = p->i; };
struct in *f;
BEGIN
{
	f->i = 1;
	addr = (uintptr_t)xlate<struct out *>(f)
}
