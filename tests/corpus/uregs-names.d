/*
 * uregs[] reads the user registers the thread entered the kernel with, by
 * the names of regs.d: BEGIN fires in dtrace, which is in a system call,
 * with its user program counter and stack pointer saved.
 */
BEGIN
{
	printf("%d %d %d\n", uregs[R_PC] != 0, uregs[R_SP] != 0, uregs[R_SP] != uregs[R_PC]);
	exit(0);
}
