/*
 * Process and thread information as Solaris' /proc describes it (psinfo_t,
 * lwpsinfo_t), translated from the Linux task_struct. Every script sees
 * these declarations, as DTrace's /usr/lib/dtrace/procfs.d. A translator is
 * checked against the running kernel's BTF only when a script uses it.
 */

/*
 * Seconds and nanoseconds: the system call ABI's struct timespec (which
 * Linux's kernel types call struct __kernel_timespec; there is no struct
 * timespec in its BTF), Solaris' timestruc_t and timespec_t. And the ABI's
 * struct timeval, for scripts that copyin() them.
 */
typedef struct timespec {
	long	tv_sec;
	long	tv_nsec;
} timestruc_t;
typedef struct timespec timespec_t;

struct timeval {
	long	tv_sec;
	long	tv_usec;
};

/* A count of nanoseconds as a timestruc_t. */
translator timestruc_t < uint64_t NS > {
	tv_sec = NS / 1000000000;
	tv_nsec = NS % 1000000000;
};

typedef struct lwpsinfo {
	int	pr_flag;	/* task flags (PF_*) */
	id_t	pr_lwpid;	/* thread ID */
	uintptr_t pr_addr;	/* address of the task_struct */
	uintptr_t pr_wchan;	/* not on Linux: 0 */
	char	pr_stype;	/* not on Linux: 0 */
	char	pr_state;	/* SSLEEP, SRUN, SZOMB, SSTOP, SIDL or SONPROC */
	char	pr_sname;	/* the state as a letter: S, R, Z, T, I, O */
	char	pr_nice;	/* nice value */
	short	pr_syscall;	/* not on Linux: 0 */
	char	pr_oldpri;	/* priority, as pr_pri */
	char	pr_cpu;		/* not on Linux: 0 */
	int	pr_pri;		/* priority (Linux prio: lower runs first) */
	ushort_t pr_pctcpu;	/* not provided (as Solaris' translator) */
	ushort_t pr_pad;
	timestruc_t pr_start;	/* when the thread was created, from the epoch */
	timestruc_t pr_time;	/* user + system CPU time of the thread */
	char	pr_clname[8];	/* scheduling class name */
	char	pr_name[16];	/* thread name (comm) */
	processorid_t pr_onpro;	/* CPU the thread last ran on */
	processorid_t pr_bindpro; /* not on Linux: PBIND_NONE (-1) */
	psetid_t pr_bindpset;	/* not on Linux: PS_NONE (-1) */
	int	pr_lgrp;	/* not on Linux: 0 */
	int	pr_filler[1];
} lwpsinfo_t;

typedef struct psinfo {
	int	pr_flag;	/* task flags (PF_*) of the thread */
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
	size_t	pr_size;	/* size of the address space in KB (kernel threads: 0) */
	size_t	pr_rssize;	/* not provided (as Solaris' translator) */
	size_t	pr_pad1;
	dev_t	pr_ttydev;	/* controlling terminal (PRNODEV, -1: none) */
	ushort_t pr_pctcpu;	/* not provided (as Solaris' translator) */
	ushort_t pr_pctmem;	/* not provided (as Solaris' translator) */
	timestruc_t pr_start;	/* when the process started, from the epoch */
	timestruc_t pr_time;	/* not provided (as Solaris' translator) */
	timestruc_t pr_ctime;	/* user + system CPU time of reaped children */
	char	pr_fname[16];	/* name of the executable (comm) */
	char	pr_psargs[80];	/* the command line, arguments joined by spaces */
	int	pr_wstat;	/* exit status (zombies) */
	int	pr_argc;	/* initial argument count */
	uintptr_t pr_argv;	/* address of the initial argument vector */
	uintptr_t pr_envp;	/* address of the initial environment vector */
	char	pr_dmodel;	/* data model: PR_MODEL_LP64 */
	char	pr_pad2[3];
	int	pr_taskid;	/* not on Linux: 0 */
	int	pr_projid;	/* not on Linux: 0 */
	int	pr_nzomb;	/* not on Linux: 0 */
	int	pr_poolid;	/* not on Linux: 0 */
	int	pr_zoneid;	/* not on Linux: 0 */
	int	pr_contract;	/* not on Linux: 0 */
	int	pr_filler[1];
	lwpsinfo_t pr_lwp;	/* the thread the process was named from */
} psinfo_t;

/* lwpsinfo_t.pr_state: Solaris' thread states. */
/* Machine faults (Solaris' <sys/fault.h>): proc:::fault's args[0]. */
inline int FLTILL = 1;		/* illegal instruction */
inline int FLTPRIV = 2;		/* privileged instruction */
inline int FLTBPT = 3;		/* breakpoint trap */
inline int FLTTRACE = 4;	/* trace trap (single step) */
inline int FLTACCESS = 5;	/* memory access fault */
inline int FLTBOUNDS = 6;	/* memory bounds violation (no mapping) */
inline int FLTIOVF = 7;		/* integer overflow */
inline int FLTIZDIV = 8;	/* integer zero divide */
inline int FLTFPE = 9;		/* floating-point exception */
inline int FLTSTACK = 10;	/* unrecoverable stack fault */
inline int FLTPAGE = 11;	/* recoverable page fault */

inline char SSLEEP = 1;
inline char SRUN = 2;
inline char SZOMB = 3;
inline char SSTOP = 4;
inline char SIDL = 5;
inline char SONPROC = 6;
inline char SWAIT = 7;

inline char PR_MODEL_ILP32 = 1;
inline char PR_MODEL_LP64 = 2;

/*
 * Solaris' synchronization object types (pr_stype, always SOBJ_NONE here)
 * and process flags, for scripts ported from Solaris, as dtrace-utils
 * keeps them.
 */
inline char SOBJ_NONE = 0;
inline char SOBJ_MUTEX = 1;
inline char SOBJ_RWLOCK = 2;
inline char SOBJ_CV = 3;
inline char SOBJ_SEMA = 4;
inline char SOBJ_USER = 5;
inline char SOBJ_USER_PI = 6;
inline char SOBJ_SHUTTLE = 7;

inline int PR_STOPPED = 0x00000001;
inline int PR_ISTOP = 0x00000002;
inline int PR_DSTOP = 0x00000004;
inline int PR_STEP = 0x00000008;
inline int PR_ASLEEP = 0x00000010;
inline int PR_PCINVAL = 0x00000020;
inline int PR_ASLWP = 0x00000040;
inline int PR_AGENT = 0x00000080;
inline int PR_DETACH = 0x00000100;
inline int PR_DAEMON = 0x00000200;
inline int PR_IDLE = 0x00000400;
inline int PR_ISSYS = 0x00001000;
inline int PR_VFORKP = 0x00002000;
inline int PR_ORPHAN = 0x00004000;
inline int PR_NOSIGCHLD = 0x00008000;
inline int PR_WAITPID = 0x00010000;
inline int PR_FORK = 0x00100000;
inline int PR_RLC = 0x00200000;
inline int PR_KLC = 0x00400000;
inline int PR_ASYNC = 0x00800000;
inline int PR_MSACCT = 0x01000000;
inline int PR_BPTADJ = 0x02000000;
inline int PR_PTRACE = 0x04000000;
inline int PR_MSFORK = 0x08000000;

translator psinfo_t < struct task_struct *T > {
	pr_flag = T->flags;
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
	/* total_vm counts 4 KB pages. */
	pr_size = T->mm != NULL ? T->mm->total_vm * 4 : 0;
	/* The kernel's dev_t of the tty, as getmajor()/getminor() read it. */
	pr_ttydev = T->signal->tty == NULL ? -1 :
	    ((dev_t)T->signal->tty->driver->major << 20) |
	    (T->signal->tty->driver->minor_start + T->signal->tty->index);
	pr_fname = T->comm;
	/* The command line is read from the current process's memory; another
	 * process's (a signal's target, a thread woken) from the runtime's
	 * table, which has every process that ran since tracing began and those
	 * /proc listed then; a kernel thread shows its comm. */
	pr_psargs = T->mm != NULL && T->mm == curthread->mm ?
	    __dtrace_psargs(T->mm->arg_start, T->mm->arg_end) :
	    __dtrace_psargs_of(T->tgid, T->comm);
	pr_wstat = T->exit_code;
	/* The kernel's start_time is CLOCK_MONOTONIC; walltimestamp - timestamp
	 * is the wall clock's offset from it. */
	pr_start = xlate <timestruc_t> ((uint64_t)(T->group_leader->start_time +
	    (walltimestamp - timestamp)));
	pr_ctime = xlate <timestruc_t> ((uint64_t)(T->signal->cutime + T->signal->cstime));
	/* exec leaves argc at the stack's start and argv, envp above it: read
	 * from the current process's memory; another process's are unknown. */
	pr_argc = T->mm != NULL && T->mm == curthread->mm ?
	    *(int *)copyin(T->mm->start_stack, 4) : 0;
	pr_argv = T->mm != NULL ? T->mm->start_stack + 8 : 0;
	pr_envp = T->mm != NULL && T->mm == curthread->mm ?
	    T->mm->start_stack + 16 + 8 * *(int *)copyin(T->mm->start_stack, 4) : 0;
	pr_lwp = xlate <lwpsinfo_t> (T);
	pr_dmodel = PR_MODEL_LP64;
	pr_taskid = 0;
	pr_projid = 0;
	pr_poolid = 0;
	pr_zoneid = 0;
	pr_nzomb = 0;
	pr_contract = 0;
};

/*
 * Linux's states map to Solaris' as ps(1) shows them: exit_state holds
 * EXIT_ZOMBIE (32) or EXIT_DEAD (16); __state (state before 5.14) holds
 * TASK_INTERRUPTIBLE (1) or TASK_UNINTERRUPTIBLE (2) for a sleeper,
 * __TASK_STOPPED (4) or __TASK_TRACED (8) for a stopped thread, TASK_NEW
 * (0x800) while it is being created, and 0 (TASK_RUNNING) for one that runs
 * (on_cpu) or waits for a CPU.
 */
translator lwpsinfo_t < struct task_struct *T > {
	pr_flag = T->flags;
	pr_lwpid = T->pid;
	pr_addr = (uintptr_t)T;
	pr_wchan = 0;
	pr_stype = 0;
	pr_state = T->exit_state != 0 ? SZOMB :
	    (T->__state & 0xc) != 0 ? SSTOP :
	    (T->__state & 0x800) != 0 ? SIDL :
	    (T->__state & 0x3) != 0 ? SSLEEP :
	    T->on_cpu != 0 ? SONPROC : SRUN;
	pr_sname = T->exit_state != 0 ? 'Z' :
	    (T->__state & 0xc) != 0 ? 'T' :
	    (T->__state & 0x800) != 0 ? 'I' :
	    (T->__state & 0x3) != 0 ? 'S' :
	    T->on_cpu != 0 ? 'O' : 'R';
	pr_nice = T->static_prio - 120;
	pr_syscall = 0;
	pr_oldpri = T->prio;
	pr_cpu = 0;
	pr_pri = T->prio;
	pr_start = xlate <timestruc_t> ((uint64_t)(T->start_time + (walltimestamp - timestamp)));
	pr_time = xlate <timestruc_t> ((uint64_t)(T->utime + T->stime));
	pr_clname = T->policy == 1 ? "RT" : T->policy == 2 ? "RT" : "TS";
	pr_name = T->comm;
	/* set_task_cpu() keeps wake_cpu equal to the CPU (thread_info.cpu or
	 * task_struct.cpu, depending on the kernel version). */
	pr_onpro = T->wake_cpu;
	pr_bindpro = -1;
	pr_bindpset = -1;
	pr_lgrp = 0;
};

inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);
inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);
