/* A translator of our own from the kernel's task_struct. */
typedef struct taskinfo {
	int ti_pid;
	char ti_name[16];
	int64_t ti_twice;
} taskinfo_t;

translator taskinfo_t < struct task_struct *T > {
	ti_pid = T->tgid;
	ti_name = T->comm;
	ti_twice = T->tgid * 2;
};

BEGIN
{
	printf("%s %d %d\n", xlate <taskinfo_t *> (curthread)->ti_name,
	    xlate <taskinfo_t *> (curthread)->ti_pid == pid,
	    xlate <taskinfo_t> (curthread).ti_twice == 2 * pid);
	exit(0);
}
