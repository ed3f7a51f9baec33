/*
 * x86_64: the segment registers and the trap number are not in pt_regs;
 * uregs[] reads them from task->thread, numbered as dtrace-utils' regs.d
 * (R_FS and R_GS read the bases there).
 */
BEGIN
{
	printf("%d %d %d %d\n", uregs[R_FS] == curthread->thread.fsbase,
	    uregs[R_GS] == curthread->thread.gsbase,
	    uregs[R_TRAPNO] == curthread->thread.trap_nr, uregs[R_FS] != 0);
	printf("%d %d %d %d %d %d %d\n", R_DS, R_ES, R_FS, R_GS, R_TRAPNO, R_R0, R_R1);
	exit(0);
}
