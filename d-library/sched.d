/*
 * The CPU as D sees it, as Solaris' /usr/lib/dtrace/sched.d and
 * <sys/cpuvar.h> declare it: `curcpu` is a cpuinfo_t *, the sysinfo
 * provider's arg2 a cpu_t *. Both point into the current CPU's entry of
 * the core object's per-CPU map, which the runtime fills from sysfs when a
 * script uses either (struct dt_cpu_data in bpf/dtrace.h; a unit test
 * holds the two to one layout).
 */

typedef int chipid_t;

typedef struct processor_info {
	int pi_state;			/* P_ONLINE (2) or P_OFFLINE (1) */
	char pi_processor_type[16];	/* the machine, as uname -m prints it */
	char pi_fputypes[32];		/* "i387 compatible" on x86 */
	int pi_clock;			/* MHz */
} processor_info_t;

typedef struct cpuinfo {
	processorid_t cpu_id;		/* CPU identifier */
	psetid_t cpu_pset;		/* processor set: -1, Linux has none */
	chipid_t cpu_chip;		/* physical package */
	lgrp_id_t cpu_lgrp;		/* locality group: the NUMA node */
	processor_info_t cpu_info;	/* CPU information */
} cpuinfo_t;

typedef struct cpu {
	processorid_t cpu_id;		/* CPU identifier */
	processorid_t cpu_seqid;	/* sequential CPU number */
	uint16_t cpu_flags;		/* CPU_RUNNING, CPU_READY, CPU_EXISTS, ... */
	chipid_t cpu_chip;		/* physical package */
	lgrp_id_t cpu_lgrp;		/* NUMA node */
	processor_info_t cpu_type_info;	/* CPU information */
} cpu_t;

inline int P_OFFLINE = 0x0001;
inline int P_ONLINE = 0x0002;
inline int CPU_RUNNING = 0x001;
inline int CPU_READY = 0x002;
inline int CPU_QUIESCED = 0x004;
inline int CPU_EXISTS = 0x008;
inline int CPU_ENABLE = 0x010;
inline int CPU_OFFLINE = 0x020;

/* The current CPU's chip, locality group and processor set: Solaris'
 * built-in variables chip, lgrp and pset. */
inline chipid_t chip = curcpu->cpu_chip;
inline lgrp_id_t lgrp = curcpu->cpu_lgrp;
inline psetid_t pset = curcpu->cpu_pset;
