//! Code generation: BPF instruction encoding and the emitter that turns a
//! typed program into one BPF program per group of probes.
pub(crate) mod emit;
pub(crate) mod insn;
