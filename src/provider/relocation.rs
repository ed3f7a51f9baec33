//! Opening an entry-program object whose loaded code reads no kernel struct.
//!
//! libbpf reads and indexes the running kernel's BTF (~5 ms, most of a
//! `BEGIN { exit(0) }` run) for every object with CO-RE relocations, even
//! when none of the programs it will load reaches one: the core object's
//! optional programs and dtrace.bpf.c's `dt_need_ppid` branch keep theirs
//! behind load-time constants. Such an object is opened against an empty
//! BTF instead. Its relocations then find no target and libbpf poisons
//! their instructions, which the verifier drops with the rest of the dead
//! code; a poisoned instruction it did reach would fail the load, never run.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;

use anyhow::{Context, Result};

/// Open options that relocate against an empty BTF, not the kernel's.
pub(crate) fn without_kernel_types() -> Result<libbpf_sys::bpf_object_open_opts> {
    static EMPTY_BTF: OnceLock<Result<(OwnedFd, CString), String>> = OnceLock::new();
    let (_, path) = EMPTY_BTF
        .get_or_init(|| write_empty_btf().map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(libbpf_sys::bpf_object_open_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_object_open_opts>() as libbpf_sys::size_t,
        btf_custom_path: path.as_ptr(),
        ..Default::default()
    })
}

/// A BTF blob with no types: the header and a string section holding "".
fn empty_btf() -> Vec<u8> {
    const HEADER_LEN: u32 = 24;
    let mut blob = Vec::with_capacity(HEADER_LEN as usize + 1);
    blob.extend_from_slice(&0xeb9f_u16.to_ne_bytes()); // magic
    blob.push(1); // version
    blob.push(0); // flags
    for field in [HEADER_LEN, 0, 0, 0, 1] {
        // hdr_len, type_off, type_len, str_off, str_len
        blob.extend_from_slice(&field.to_ne_bytes());
    }
    blob.push(0);
    blob
}

/// The empty BTF in an anonymous file that libbpf opens by its /proc path.
fn write_empty_btf() -> Result<(OwnedFd, CString)> {
    // SAFETY: a NUL-terminated name and valid flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"dtrace-empty-btf".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).context("creating the empty BTF for objects without CO-RE");
    }
    // SAFETY: memfd_create returned a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd.try_clone()?);
    file.write_all(&empty_btf())?;
    let path = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("no NUL in a path of digits");
    Ok((fd, path))
}

#[cfg(test)]
mod tests {
    #[test]
    fn libbpf_parses_the_empty_btf() {
        let blob = super::empty_btf();
        // SAFETY: the blob outlives the call; the result is freed below.
        let btf = unsafe { libbpf_sys::btf__new(blob.as_ptr().cast(), blob.len() as u32) };
        assert!(!btf.is_null() && (btf as isize) > 0, "libbpf refused the empty BTF");
        // SAFETY: btf is a valid object from btf__new.
        unsafe {
            assert_eq!(libbpf_sys::btf__type_cnt(btf), 1, "only the void type");
            libbpf_sys::btf__free(btf);
        }
    }
}
