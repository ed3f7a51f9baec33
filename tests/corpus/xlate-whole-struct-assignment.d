/*
 * A struct translated whole (`out = xlate <struct T> (in)`) is copied as a
 * struct value: members the translator defines are translated (one that
 * is itself a translation, member by member), the others are zero.
 */
struct input_struct {
	int ii;
	char ic;
};

struct output_struct {
	int oi;
	char oc;
	long ol;
};

translator struct output_struct < struct input_struct ivar >
{
	oi = ((struct input_struct)ivar).ii * 2;
	ol = ((struct input_struct)ivar).ic;
};

struct output_struct out;
struct input_struct in;
psinfo_t p;

BEGIN
{
	in.ii = 100;
	in.ic = 'z';
	out = xlate <struct output_struct> (in);
	printf("%d %d %d\n", out.oi, out.oc, out.ol);
	p = xlate <psinfo_t> (curthread);
	printf("%d %s %d %d\n", p.pr_pid == pid, p.pr_fname, p.pr_start.tv_sec > 0, p.pr_lwp.pr_lwpid == tid);
	exit(0);
}
