//! Per-probe copies of an entry program, for the providers whose programs
//! cannot learn which probe fired on every kernel (sdt, rawtp, fbt: no
//! attach cookie for tracepoints before 5.15, raw tracepoints before 6.10,
//! trampolines before 6.6; a trampoline program is also bound to one
//! function when it loads). libbpf loads the entry program once, with its
//! maps and CO-RE relocations resolved; each probe then gets a copy of the
//! final instructions with its slot in place of `DT_SLOT_MARKER`
//! (bpf/dtrace.h), loaded for its own attach target.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use anyhow::{bail, Result};
use libbpf_rs::AsRawLibbpf;

use crate::defs::layout::{SlotProbe, TpField};

/// The immediate of `dt_copy_slot()`'s move: bpf/dtrace.h's DT_SLOT_MARKER.
const SLOT_MARKER: i32 = 0x7e51_07ed;
/// BPF_ALU64 | BPF_MOV | BPF_K: `rX = imm`.
const MOV64_IMM: u8 = 0xb7;

/// What a copy is loaded for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Target {
    pub expected_attach_type: libbpf_sys::bpf_attach_type,
    /// The BTF ID of the function a trampoline program attaches to; 0 for none.
    pub attach_btf_id: u32,
}

/// Loads a copy of `program` (loaded already) that fires slot `slot`.
pub(crate) fn load(program: &libbpf_rs::Program, slot: u32, target: Target) -> Result<OwnedFd> {
    Ok(load_insns(program, &final_insns(program, Some(slot))?, target)?)
}

/// The final instructions of `program` (loaded already), with `slot` in
/// place of its slot marker when it is a per-probe program.
pub(crate) fn final_insns(program: &libbpf_rs::Program, slot: Option<u32>) -> Result<Vec<libbpf_sys::bpf_insn>> {
    let mut insns = program.insns().to_vec();
    if let Some(slot) = slot {
        if patch_slot(&mut insns, slot) == 0 {
            bail!("entry program {} has no slot to patch", program.name().to_string_lossy());
        }
    }
    Ok(insns)
}

/// Loads `insns` as a program of `program`'s type and name (a copy of it,
/// or it joined with clause code).
pub(crate) fn load_insns(
    program: &libbpf_rs::Program,
    insns: &[libbpf_sys::bpf_insn],
    target: Target,
) -> std::io::Result<OwnedFd> {
    let name = CString::new(program.name().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: opts is plain data; zero is every field's default.
    let mut opts: libbpf_sys::bpf_prog_load_opts = unsafe { std::mem::zeroed() };
    opts.sz = std::mem::size_of::<libbpf_sys::bpf_prog_load_opts>() as _;
    opts.expected_attach_type = target.expected_attach_type;
    opts.attach_btf_id = target.attach_btf_id;
    // SAFETY: the program pointer is libbpf's own, alive as long as `program`.
    let prog_type = unsafe { libbpf_sys::bpf_program__type(program.as_libbpf_object().as_ptr()) };
    // SAFETY: insns is a slice of struct bpf_insn; the name and opts outlive the call.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            prog_type,
            name.as_ptr(),
            c"GPL".as_ptr(),
            insns.as_ptr(),
            insns.len() as _,
            &mut opts,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::from_raw_os_error(-fd));
    }
    // SAFETY: the kernel just returned this descriptor to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Fills slot `slot` of a provider's table of probes (`dt_<p>_probes`).
pub(crate) fn set_probe(table: &dyn libbpf_rs::MapCore, slot: u32, probe_id: u32, fields: &[TpField]) -> Result<()> {
    let mut probe = SlotProbe { probe_id, nfields: fields.len() as u32, ..Default::default() };
    for (to, from) in probe.fields.iter_mut().zip(fields) {
        *to = *from;
    }
    // SAFETY: SlotProbe is the plain C struct the map's values are.
    let bytes = unsafe {
        std::slice::from_raw_parts((&probe as *const SlotProbe).cast::<u8>(), std::mem::size_of::<SlotProbe>())
    };
    table.update(&slot.to_ne_bytes(), bytes, libbpf_rs::MapFlags::ANY)?;
    Ok(())
}

/// Rewrites every `rX = DT_SLOT_MARKER` to `rX = slot`; returns how many.
fn patch_slot(insns: &mut [libbpf_sys::bpf_insn], slot: u32) -> usize {
    let mut patched = 0;
    for insn in insns.iter_mut().filter(|i| i.code == MOV64_IMM && i.imm == SLOT_MARKER) {
        insn.imm = slot as i32;
        patched += 1;
    }
    patched
}

/// Attaches a raw tracepoint or trampoline program: to tracepoint `name`,
/// or (None) to the function it was loaded for. The descriptor returned
/// keeps it attached.
pub(crate) fn attach_raw(prog: &OwnedFd, name: Option<&str>) -> std::io::Result<OwnedFd> {
    let name = name.map(|n| CString::new(n).unwrap_or_default());
    // SAFETY: a valid program descriptor and a C string or null.
    let fd = unsafe {
        libbpf_sys::bpf_raw_tracepoint_open(name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()), prog.as_raw_fd())
    };
    if fd < 0 {
        return Err(std::io::Error::from_raw_os_error(-fd));
    }
    // SAFETY: the kernel just returned this descriptor to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Attaches a program to a perf event (a tracepoint's, a kprobe's) and
/// enables it; the event's descriptor keeps it attached.
pub(crate) fn attach_perf(prog: &OwnedFd, event: &OwnedFd) -> std::io::Result<()> {
    set_perf_program(prog, event)?;
    // SAFETY: an ioctl on a descriptor we own, with an int argument.
    if unsafe { libc::ioctl(event.as_raw_fd(), super::perf::PERF_EVENT_IOC_ENABLE as _, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the program a perf event runs, leaving the event as enabled or
/// disabled as it is; the event's descriptor keeps it attached.
pub(crate) fn set_perf_program(prog: &OwnedFd, event: &OwnedFd) -> std::io::Result<()> {
    /// _IOW('$', 8, __u32) from linux/perf_event.h.
    const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
    // SAFETY: an ioctl on a descriptor we own, with an int argument.
    if unsafe { libc::ioctl(event.as_raw_fd(), PERF_EVENT_IOC_SET_BPF as _, prog.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each per-probe entry program names its slot once, as a move the
    /// copies can patch: the compiler must not have folded it away.
    #[test]
    fn per_probe_entry_programs_carry_one_slot_marker() {
        let objects: &[(&str, &[u8])] = &[
            ("sdt", include_bytes!(concat!(env!("OUT_DIR"), "/sdt.bpf.o"))),
            ("rawtp", include_bytes!(concat!(env!("OUT_DIR"), "/rawtp.bpf.o"))),
            ("fbt", include_bytes!(concat!(env!("OUT_DIR"), "/fbt.bpf.o"))),
        ];
        for (name, bytes) in objects {
            let object = libbpf_rs::ObjectBuilder::default().open_memory(bytes).expect("the object opens");
            let mut programs = 0;
            for prog in object.progs() {
                let prog_name = prog.name().to_string_lossy().into_owned();
                let mut insns = prog.insns().to_vec();
                let uses_cookie = prog_name.ends_with("_multi");
                let expected = if uses_cookie { 0 } else { 1 };
                assert_eq!(patch_slot(&mut insns, 7), expected, "{name}: {prog_name}");
                programs += 1;
            }
            assert!(programs > 0, "{name} has programs");
        }
    }
}
