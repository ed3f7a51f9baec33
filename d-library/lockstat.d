/*
 * The lockstat provider's constants: rw-block's and rw-spin's arg2 says
 * how the lock was wanted, with Solaris' krw_t values (bpf/lockstat.bpf.c
 * passes the same numbers).
 */

inline int RW_WRITER = 0;
inline int RW_READER = 1;

/*
 * spin-* probes' args[0], named as the kernel's code and dtrace-utils
 * name it (the kernel's typedef, which the D compiler does not otherwise
 * know as a type name when it reads an argument's declaration).
 */
typedef struct spinlock spinlock_t;
