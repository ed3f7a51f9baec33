/*
 * Associative arrays hold structs: a D struct or a kernel one copied in
 * whole; a missing element reads as a zeroed struct; declared or typed by
 * the first assignment alike.
 */
struct pair { int a; long b; };
struct pair k;
struct pair declared[string];

BEGIN
{
	k.a = 1;
	k.b = 2;
	m[1] = k;
	k.a = 10;
	declared["x"] = k;
	t[pid] = *curthread;
	printf("%d %d %d %d\n", m[1].a, m[1].b, m[2].b, declared["x"].a);
	printf("%d %d\n", t[pid].pid == pid, t[pid].tgid == pid);
	exit(0);
}
