/*
 * Process and thread information as Solaris' /proc describes it (psinfo_t,
 * lwpsinfo_t), translated from the Linux task_struct. Every script sees
 * these declarations, as DTrace's /usr/lib/dtrace/procfs.d. A translator is
 * checked against the running kernel's BTF only when a script uses it.
 */

typedef struct psinfo {
	int	pr_nlwp;	/* number of threads */
	pid_t	pr_pid;		/* process ID (Linux: thread group ID) */
	pid_t	pr_ppid;	/* parent's process ID */
	pid_t	pr_pgid;	/* process group ID */
	pid_t	pr_sid;		/* session ID */
	uid_t	pr_uid;		/* real user ID */
	uid_t	pr_euid;	/* effective user ID */
	gid_t	pr_gid;		/* real group ID */
	gid_t	pr_egid;	/* effective group ID */
	uintptr_t pr_addr;	/* address of the task_struct */
	char	pr_fname[16];	/* name of the executable (comm) */
	char	pr_psargs[80];	/* the command line, arguments joined by spaces */
	int	pr_wstat;	/* exit status (zombies) */
	int	pr_dmodel;	/* data model: PR_MODEL_LP64 */
	int	pr_taskid;	/* not on Linux: 0 */
	int	pr_projid;	/* not on Linux: 0 */
	int	pr_poolid;	/* not on Linux: 0 */
	int	pr_zoneid;	/* not on Linux: 0 */
} psinfo_t;

typedef struct lwpsinfo {
	int	pr_flag;	/* task flags (PF_*) */
	id_t	pr_lwpid;	/* thread ID */
	uintptr_t pr_addr;	/* address of the task_struct */
	int	pr_pri;		/* priority (Linux prio: lower runs first) */
	char	pr_nice;	/* nice value */
	char	pr_clname[8];	/* scheduling class name */
} lwpsinfo_t;

inline int PR_MODEL_ILP32 = 1;
inline int PR_MODEL_LP64 = 2;

translator psinfo_t < struct task_struct *T > {
	pr_nlwp = T->signal->nr_threads;
	pr_pid = T->tgid;
	pr_ppid = T->real_parent->tgid;
	pr_pgid = T->signal->pids[2]->numbers[0].nr;	/* PIDTYPE_PGID */
	pr_sid = T->signal->pids[3]->numbers[0].nr;	/* PIDTYPE_SID */
	pr_uid = T->cred->uid.val;
	pr_euid = T->cred->euid.val;
	pr_gid = T->cred->gid.val;
	pr_egid = T->cred->egid.val;
	pr_addr = (uintptr_t)T;
	pr_fname = T->comm;
	/* The command line is read from the current process's memory: other
	 * processes (a signal's target) show their comm. */
	pr_psargs = T->mm != NULL && T->mm == curthread->mm ?
	    __dtrace_psargs(T->mm->arg_start, T->mm->arg_end) : T->comm;
	pr_wstat = T->exit_code;
	pr_dmodel = PR_MODEL_LP64;
	pr_taskid = 0;
	pr_projid = 0;
	pr_poolid = 0;
	pr_zoneid = 0;
};

translator lwpsinfo_t < struct task_struct *T > {
	pr_flag = T->flags;
	pr_lwpid = T->pid;
	pr_addr = (uintptr_t)T;
	pr_pri = T->prio;
	pr_nice = T->static_prio - 120;
	pr_clname = T->policy == 1 ? "RT" : T->policy == 2 ? "RT" : "TS";
};

inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);
inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);
