//! Offsets into the structs of bpf/dtrace.h, read from the skeleton's
//! generated types: the C header is their one definition, and these
//! constants follow it when it changes.

use std::mem::{offset_of, size_of};

use super::skel::core::types::{dt_fault_rec, dt_probe_ctx, dt_rec_hdr, dt_spec, dt_spec_stats, dt_state, dt_vtime};

pub(crate) const CTX_ARGS: usize = offset_of!(dt_probe_ctx, args);
pub(crate) const CTX_PROBE_ID: usize = offset_of!(dt_probe_ctx, probe_id);
pub(crate) const CTX_ERRNO: usize = offset_of!(dt_probe_ctx, errno_val);
pub(crate) const CTX_PPID: usize = offset_of!(dt_probe_ctx, ppid);
pub(crate) const CTX_TASK: usize = offset_of!(dt_probe_ctx, task);
pub(crate) const CTX_PID_TGID: usize = offset_of!(dt_probe_ctx, pid_tgid);
pub(crate) const CTX_UID_GID: usize = offset_of!(dt_probe_ctx, uid_gid);
pub(crate) const CTX_COMM: usize = offset_of!(dt_probe_ctx, comm);

pub(crate) const STATE_SIZE: usize = size_of::<dt_state>();
pub(crate) const STATE_DRAINING: usize = offset_of!(dt_state, draining);
pub(crate) const STATE_WALL_OFFSET: usize = offset_of!(dt_state, wall_offset_ns);

pub(crate) const HDR_SIZE: usize = size_of::<dt_rec_hdr>();
pub(crate) const HDR_EPID: usize = offset_of!(dt_rec_hdr, epid);
pub(crate) const HDR_PROBE_ID: usize = offset_of!(dt_rec_hdr, probe_id);
pub(crate) const HDR_CPU: usize = offset_of!(dt_rec_hdr, cpu);
pub(crate) const HDR_SPEC: usize = offset_of!(dt_rec_hdr, spec);
pub(crate) const HDR_PRESENT: usize = offset_of!(dt_rec_hdr, present);

pub(crate) const FAULT_SIZE: usize = size_of::<dt_fault_rec>();
pub(crate) const FAULT_EPID: usize = offset_of!(dt_fault_rec, epid);
pub(crate) const FAULT_ACTION: usize = offset_of!(dt_fault_rec, action);
pub(crate) const FAULT_KIND: usize = offset_of!(dt_fault_rec, kind);
pub(crate) const FAULT_ADDR: usize = offset_of!(dt_fault_rec, addr);

pub(crate) const VTIME_SIZE: usize = size_of::<dt_vtime>();
pub(crate) const VTIME_TOTAL: usize = offset_of!(dt_vtime, total);
pub(crate) const VTIME_SINCE: usize = offset_of!(dt_vtime, since);

/// `epid` of a fault record (DT_EPID_FAULT).
pub(crate) const EPID_FAULT: u32 = u32::MAX;
pub(crate) const FAULT_BADADDR: u32 = 1;
pub(crate) const FAULT_DIVZERO: u32 = 2;
pub(crate) const FAULT_ILLOP: u32 = 3;
/// `epid` of the records of commit() and discard() (DT_EPID_COMMIT, DT_EPID_DISCARD).
pub(crate) const EPID_COMMIT: u32 = 0xffff_fffe;
pub(crate) const EPID_DISCARD: u32 = 0xffff_fffd;

pub(crate) const SPEC_SIZE: usize = size_of::<dt_spec>();
pub(crate) const SPEC_STATE: usize = offset_of!(dt_spec, state);
pub(crate) const SPEC_BYTES: usize = offset_of!(dt_spec, bytes);
pub(crate) const SPEC_TAG: usize = offset_of!(dt_spec, tag);
/// dt_spec states (DT_SPEC_*).
pub(crate) const SPEC_FREE: i32 = 0;
pub(crate) const SPEC_ACTIVE: i32 = 1;
pub(crate) const SPEC_ENDING: i32 = 2;
/// DT_SPEC_TAG_STEP: tags are generation << 16 | ID, so nspec stays below it.
pub(crate) const SPEC_TAG_STEP: u32 = 0x10000;

pub(crate) const SPEC_STATS_DROPS: usize = offset_of!(dt_spec_stats, drops);
pub(crate) const SPEC_STATS_BUSY: usize = offset_of!(dt_spec_stats, busy);
pub(crate) const SPEC_STATS_UNAVAIL: usize = offset_of!(dt_spec_stats, unavail);

/// The native-endian u32 at byte `off` of a record (0 past its end).
pub(crate) fn read_u32(data: &[u8], off: usize) -> u32 {
    data.get(off..off + 4).map_or(0, |b| u32::from_ne_bytes(b.try_into().unwrap_or([0; 4])))
}

/// The native-endian u64 at byte `off` of a record (0 past its end).
pub(crate) fn read_u64(data: &[u8], off: usize) -> u64 {
    data.get(off..off + 8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_agrees_with_the_checker() {
        // The type checker lays out records after a header of this size.
        assert_eq!(HDR_SIZE, crate::sema::check::RECORD_HEADER);
        // arg0..arg9 sit before the scalar fields the generated code reads.
        const { assert!(CTX_ARGS + 10 * 8 <= CTX_PROBE_ID) };
        assert_eq!(HDR_SIZE % 8, 0);
    }
}
