typedef struct out { int a; } out_t;

translator out_t < struct task_struct *T > {
	b = T->pid;
};
