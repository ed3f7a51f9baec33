/*
 * The lockstat provider's constants: rw-block's and rw-spin's arg2 says
 * how the lock was wanted, with Solaris' krw_t values (bpf/lockstat.bpf.c
 * passes the same numbers).
 */

inline int RW_WRITER = 0;
inline int RW_READER = 1;

