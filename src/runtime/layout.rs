//! Offsets into the structs of bpf/dtrace.h, read from the skeleton's
//! generated types: the C header is their one definition, and these
//! constants follow it when it changes.

use std::mem::{offset_of, size_of};

use super::skel::dtrace::types::{dt_fault_rec, dt_probe_ctx, dt_rec_hdr, dt_state};

pub(crate) const CTX_ARGS: usize = offset_of!(dt_probe_ctx, args);
pub(crate) const CTX_PROBE_ID: usize = offset_of!(dt_probe_ctx, probe_id);
pub(crate) const CTX_ERRNO: usize = offset_of!(dt_probe_ctx, errno_val);
pub(crate) const CTX_PPID: usize = offset_of!(dt_probe_ctx, ppid);

pub(crate) const STATE_DRAINING: usize = offset_of!(dt_state, draining);

pub(crate) const HDR_SIZE: usize = size_of::<dt_rec_hdr>();
pub(crate) const HDR_EPID: usize = offset_of!(dt_rec_hdr, epid);
pub(crate) const HDR_PROBE_ID: usize = offset_of!(dt_rec_hdr, probe_id);
pub(crate) const HDR_CPU: usize = offset_of!(dt_rec_hdr, cpu);
pub(crate) const HDR_PRESENT: usize = offset_of!(dt_rec_hdr, present);

pub(crate) const FAULT_SIZE: usize = size_of::<dt_fault_rec>();
pub(crate) const FAULT_EPID: usize = offset_of!(dt_fault_rec, epid);
pub(crate) const FAULT_ACTION: usize = offset_of!(dt_fault_rec, action);
pub(crate) const FAULT_KIND: usize = offset_of!(dt_fault_rec, kind);
pub(crate) const FAULT_ADDR: usize = offset_of!(dt_fault_rec, addr);

/// `epid` of a fault record (DT_EPID_FAULT).
pub(crate) const EPID_FAULT: u32 = u32::MAX;
pub(crate) const FAULT_BADADDR: u32 = 1;
pub(crate) const FAULT_DIVZERO: u32 = 2;
pub(crate) const FAULT_ILLOP: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_agrees_with_the_checker() {
        // The type checker lays out records after a header of this size.
        assert_eq!(HDR_SIZE, crate::sema::check::RECORD_HEADER);
        // arg0..arg9 sit before the scalar fields the generated code reads.
        assert!(CTX_ARGS + 10 * 8 <= CTX_PROBE_ID);
        assert_eq!(HDR_SIZE % 8, 0);
    }
}
