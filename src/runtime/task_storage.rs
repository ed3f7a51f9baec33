//! Task-local storage for thread-local variables (`self->`): one
//! BPF_MAP_TYPE_TASK_STORAGE map per variable, where the kernel allows it
//! (`usable`); hash maps keyed by thread ID elsewhere.

use std::sync::OnceLock;

use anyhow::{bail, Result};
use libbpf_rs::{MapHandle, MapType};

/// The program types clause code runs as (the entry programs' types).
pub(super) const PROGRAM_TYPES: [libbpf_sys::bpf_prog_type; 4] = [
    libbpf_sys::BPF_PROG_TYPE_KPROBE,
    libbpf_sys::BPF_PROG_TYPE_TRACEPOINT,
    libbpf_sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
    libbpf_sys::BPF_PROG_TYPE_PERF_EVENT,
];

/// Whether programs of every type that runs clause code may call
/// bpf_get_current_task_btf and bpf_task_storage_get (Linux 5.12 on; 5.10
/// has neither for tracing). Asked of the kernel once: libbpf loads a
/// probe program per type and helper. DTRACE_NO_TASK_STORAGE=1 answers no,
/// to run the hash-map path on a kernel that has both.
pub(crate) fn usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        if std::env::var_os("DTRACE_NO_TASK_STORAGE").is_some() {
            return false;
        }
        let helpers = [libbpf_sys::BPF_FUNC_get_current_task_btf, libbpf_sys::BPF_FUNC_task_storage_get];
        PROGRAM_TYPES.iter().all(|&ty| {
            // SAFETY: a probe call with no options; it only loads programs.
            helpers
                .iter()
                .all(|&helper| unsafe { libbpf_sys::libbpf_probe_bpf_helper(ty, helper, std::ptr::null()) } == 1)
        })
    })
}

/// Kernel BTF describing the maps' key (int) and values (byte arrays of
/// each size), which the kernel requires of local-storage maps. Freed once
/// the maps exist: each map holds the kernel's copy.
struct ValueTypes {
    btf: *mut libbpf_sys::btf,
    key: u32,
    byte: u32,
}

impl ValueTypes {
    fn new() -> Result<ValueTypes> {
        // SAFETY: btf__new_empty returns an owned object or NULL (errno set).
        let btf = unsafe { libbpf_sys::btf__new_empty() };
        if btf.is_null() {
            bail!("creating BTF for task-local storage: {}", std::io::Error::last_os_error());
        }
        let mut types = ValueTypes { btf, key: 0, byte: 0 };
        types.key = types
            .added(unsafe { libbpf_sys::btf__add_int(btf, c"int".as_ptr(), 4, libbpf_sys::BTF_INT_SIGNED as i32) })?;
        types.byte = types.added(unsafe { libbpf_sys::btf__add_int(btf, c"unsigned char".as_ptr(), 1, 0) })?;
        Ok(types)
    }

    fn added(&self, id: i32) -> Result<u32> {
        u32::try_from(id).map_err(|_| anyhow::anyhow!("building BTF for task-local storage: error {id}"))
    }

    /// The type ID of a `size`-byte array.
    fn array(&mut self, size: usize) -> Result<u32> {
        // SAFETY: self.btf is valid; the element and index types are in it.
        self.added(unsafe { libbpf_sys::btf__add_array(self.btf, self.key as i32, self.byte as i32, size as u32) })
    }

    fn load(&self) -> Result<i32> {
        // SAFETY: self.btf is valid.
        let err = unsafe { libbpf_sys::btf__load_into_kernel(self.btf) };
        if err != 0 {
            bail!("loading BTF for task-local storage: {}", std::io::Error::from_raw_os_error(-err));
        }
        Ok(unsafe { libbpf_sys::btf__fd(self.btf) })
    }
}

impl Drop for ValueTypes {
    fn drop(&mut self) {
        // SAFETY: created by btf__new_empty, freed once.
        unsafe { libbpf_sys::btf__free(self.btf) };
    }
}

/// One task-storage map per value size in `value_sizes` (bytes, multiples
/// of 8), in that order.
pub(crate) fn create_maps(value_sizes: &[usize]) -> Result<Vec<MapHandle>> {
    if value_sizes.is_empty() {
        return Ok(Vec::new());
    }
    let mut types = ValueTypes::new()?;
    let value_types = value_sizes.iter().map(|&size| types.array(size)).collect::<Result<Vec<u32>>>()?;
    let btf_fd = types.load()?;
    value_sizes
        .iter()
        .zip(value_types)
        .map(|(&size, value_type)| {
            let opts = libbpf_sys::bpf_map_create_opts {
                sz: std::mem::size_of::<libbpf_sys::bpf_map_create_opts>() as _,
                btf_fd: btf_fd as u32,
                btf_key_type_id: types.key,
                btf_value_type_id: value_type,
                // The kernel allocates a task's value on its first store.
                map_flags: libbpf_sys::BPF_F_NO_PREALLOC,
                ..Default::default()
            };
            Ok(MapHandle::create(MapType::TaskStorage, Some("dt_self"), 4, size as u32, 0, &opts)?)
        })
        .collect()
}
