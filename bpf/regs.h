/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arg0..arg9 from the registers of a kprobe or uprobe program (fbt, pid):
 * at entry the first six arguments; at return, as DTrace has them, arg1 the
 * return value and arg0 the return instruction's offset, which neither a
 * kretprobe nor a uretprobe knows (0). Include after bpf_tracing.h.
 */
#ifndef DTRACE_REGS_H
#define DTRACE_REGS_H

static __always_inline void dt_args_from_regs(struct dt_probe_ctx *pc, struct pt_regs *ctx, int ret)
{
	if (ret) {
		pc->args[0] = 0;
		pc->args[1] = PT_REGS_RC(ctx);
		pc->args[2] = 0;
		pc->args[3] = 0;
		pc->args[4] = 0;
		pc->args[5] = 0;
	} else {
		pc->args[0] = PT_REGS_PARM1(ctx);
		pc->args[1] = PT_REGS_PARM2(ctx);
		pc->args[2] = PT_REGS_PARM3(ctx);
		pc->args[3] = PT_REGS_PARM4(ctx);
		pc->args[4] = PT_REGS_PARM5(ctx);
		pc->args[5] = PT_REGS_PARM6(ctx);
	}
	for (int i = 6; i < DT_NARGS; i++)
		pc->args[i] = 0;
}

#endif
