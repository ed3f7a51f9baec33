/*
 * DTrace's subroutines that read kernel objects, written in D over the
 * running kernel's types (checked against its BTF only when a script calls
 * one). A script calls them as functions: mutex_owned(m).
 *
 * Linux's mutex (struct mutex) is adaptive, as Solaris' adaptive mutex: it
 * spins while its owner runs, then sleeps. Its owner word is the owning
 * task's address with three flag bits below it. DTrace's krwlock_t is
 * Linux's rw_semaphore: bit 0 of its count says a writer holds it, the
 * bits from 8 up count the readers.
 */

/* Whether anyone holds mutex m. */
inline int mutex_owned[struct mutex *m] = (m->owner.counter & ~0x7) != 0;

/* The thread that holds mutex m, or NULL. */
inline struct task_struct *mutex_owner[struct mutex *m] =
    (struct task_struct *)(m->owner.counter & ~0x7);

inline int mutex_type_adaptive[struct mutex *m] = 1;
inline int mutex_type_spin[struct mutex *m] = 0;

/* Whether a writer holds rw, readers hold it, a writer holds it. */
inline int rw_write_held[struct rw_semaphore *rw] = (rw->count.counter & 0x1) != 0;
inline int rw_read_held[struct rw_semaphore *rw] =
    (rw->count.counter & 0x1) == 0 && (rw->count.counter >> 8) > 0;
inline int rw_iswriter[struct rw_semaphore *rw] = (rw->count.counter & 0x1) != 0;

/* The file open as descriptor fd in the current process, or NULL. */
inline struct file *getf[int fd] =
    fd >= 0 && fd < curthread->files->fdt->max_fds ? curthread->files->fdt->fd[fd] : NULL;

/* The current process's working and root directories: DTrace's built-in
 * variables cwd and root. */
inline string cwd = d_path(&curthread->fs->pwd);
inline string root = d_path(&curthread->fs->root);

/* Oracle's dtrace's execargs: the current process's command line, its
 * arguments joined by spaces (pr_psargs'); a kernel thread has none. */
inline string execargs = curthread->mm != NULL ?
    __dtrace_psargs(curthread->mm->arg_start, curthread->mm->arg_end) : "";

/* Linux has no zones: every process runs in the global zone. */
inline string zonename = "global";
