/*
 * Names of the words of uregs[] on x86_64: the user registers a thread
 * entered the kernel with, in the order of the kernel's struct pt_regs
 * (r15 first), then the segment registers and the trap number, which Linux
 * keeps in task->thread, numbered as dtrace-utils' regs.d (R_FS and R_GS
 * read the bases, as there). The 32-bit names (R_EAX, ...) name the same
 * registers, and R_PC, R_SP, R_FP, R_PS, R_R0 and R_R1 are the portable
 * ones. Linux keeps the system call number or the exception's error code
 * in orig_ax: R_ERR reads it.
 */

inline int R_R15 = 0;
inline int R_R14 = 1;
inline int R_R13 = 2;
inline int R_R12 = 3;
inline int R_RBP = 4;
inline int R_RBX = 5;
inline int R_R11 = 6;
inline int R_R10 = 7;
inline int R_R9 = 8;
inline int R_R8 = 9;
inline int R_RAX = 10;
inline int R_RCX = 11;
inline int R_RDX = 12;
inline int R_RSI = 13;
inline int R_RDI = 14;
inline int R_ERR = 15;
inline int R_RIP = 16;
inline int R_CS = 17;
inline int R_RFL = 18;
inline int R_RSP = 19;
inline int R_SS = 20;
inline int R_DS = 21;
inline int R_ES = 22;
inline int R_FS = 23;
inline int R_GS = 24;
inline int R_TRAPNO = 25;
inline int R_FSBASE = 26;
inline int R_GSBASE = 27;

inline int R_EAX = 10;
inline int R_ECX = 11;
inline int R_EDX = 12;
inline int R_EBX = 5;
inline int R_EBP = 4;
inline int R_ESI = 13;
inline int R_EDI = 14;
inline int R_EIP = 16;
inline int R_EFL = 18;
inline int R_ESP = 19;
inline int R_UESP = 19;

inline int R_PC = 16;
inline int R_SP = 19;
inline int R_FP = 4;
inline int R_PS = 18;
inline int R_R0 = 10;
inline int R_R1 = 5;
