//! The BTF a generated program with BPF functions of its own needs: the
//! kernel takes a function as a helper's argument (chill()'s bpf_loop()
//! callback) only from a program whose BTF func_info describes each of its
//! functions, with static linkage.

use anyhow::{bail, Result};

use crate::codegen::insn::{Insn, PSEUDO_FUNC};

/// A program's function descriptions, loaded into the kernel; `None` of
/// a program with no functions but its main one.
pub(crate) struct FunctionInfo {
    btf: *mut libbpf_sys::btf,
    records: Vec<libbpf_sys::bpf_func_info>,
}

impl FunctionInfo {
    pub(crate) fn of(insns: &[Insn]) -> Result<Option<FunctionInfo>> {
        let mut starts: Vec<usize> = insns
            .iter()
            .enumerate()
            .filter(|(_, i)| i.is_ld_imm64() && i.regs >> 4 == PSEUDO_FUNC)
            .map(|(at, i)| (at as i64 + i64::from(i.imm) + 1) as usize)
            .collect();
        if starts.is_empty() {
            return Ok(None);
        }
        starts.sort_unstable();
        starts.dedup();
        // SAFETY: btf__new_empty returns an owned object or NULL (errno set).
        let btf = unsafe { libbpf_sys::btf__new_empty() };
        if btf.is_null() {
            bail!("creating BTF for a program's functions: {}", std::io::Error::last_os_error());
        }
        let mut info = FunctionInfo { btf, records: Vec::new() };
        let signed = libbpf_sys::BTF_INT_SIGNED as i32;
        // SAFETY: info.btf is valid for each call; names are NUL-terminated.
        unsafe {
            let int = info.added(libbpf_sys::btf__add_int(btf, c"int".as_ptr(), 4, signed))?;
            let long = info.added(libbpf_sys::btf__add_int(btf, c"long".as_ptr(), 8, signed))?;
            let uint = info.added(libbpf_sys::btf__add_int(btf, c"unsigned int".as_ptr(), 4, 0))?;
            let void_ptr = info.added(libbpf_sys::btf__add_ptr(btf, 0))?;
            // int dt_clause(void *ctx)
            let main = info.added(libbpf_sys::btf__add_func_proto(btf, int as i32))?;
            info.added(libbpf_sys::btf__add_func_param(btf, c"ctx".as_ptr(), void_ptr as i32))?;
            let static_linkage = libbpf_sys::BTF_FUNC_STATIC;
            let main =
                info.added(libbpf_sys::btf__add_func(btf, c"dt_clause".as_ptr(), static_linkage, main as i32))?;
            // long dt_callback(unsigned int index, void *ctx)
            let callback = info.added(libbpf_sys::btf__add_func_proto(btf, long as i32))?;
            info.added(libbpf_sys::btf__add_func_param(btf, c"index".as_ptr(), uint as i32))?;
            info.added(libbpf_sys::btf__add_func_param(btf, c"ctx".as_ptr(), void_ptr as i32))?;
            let callback =
                info.added(libbpf_sys::btf__add_func(btf, c"dt_callback".as_ptr(), static_linkage, callback as i32))?;
            info.records.push(libbpf_sys::bpf_func_info { insn_off: 0, type_id: main });
            for start in starts {
                info.records.push(libbpf_sys::bpf_func_info { insn_off: start as u32, type_id: callback });
            }
            let err = libbpf_sys::btf__load_into_kernel(btf);
            if err != 0 {
                bail!("loading BTF for a program's functions: {}", std::io::Error::from_raw_os_error(-err));
            }
        }
        Ok(Some(info))
    }

    fn added(&self, id: i32) -> Result<u32> {
        u32::try_from(id).map_err(|_| anyhow::anyhow!("building BTF for a program's functions: error {id}"))
    }

    /// Sets `opts` to describe the program's functions with this BTF.
    pub(crate) fn describe(&self, opts: &mut libbpf_sys::bpf_prog_load_opts) {
        // SAFETY: self.btf is valid and loaded.
        opts.prog_btf_fd = unsafe { libbpf_sys::btf__fd(self.btf) } as u32;
        opts.func_info = self.records.as_ptr().cast();
        opts.func_info_cnt = self.records.len() as u32;
        opts.func_info_rec_size = std::mem::size_of::<libbpf_sys::bpf_func_info>() as u32;
    }
}

impl Drop for FunctionInfo {
    fn drop(&mut self) {
        // SAFETY: created by btf__new_empty, freed once.
        unsafe { libbpf_sys::btf__free(self.btf) };
    }
}

/// Whether every program type that runs clause code may call bpf_loop()
/// (Linux 5.17 on). Asked of the kernel once, by libbpf's probe programs.
pub(crate) fn bpf_loop_usable() -> bool {
    static USABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *USABLE.get_or_init(|| {
        super::task_storage::PROGRAM_TYPES.iter().all(|&ty| {
            // SAFETY: a probe call with no options; it only loads programs.
            unsafe { libbpf_sys::libbpf_probe_bpf_helper(ty, libbpf_sys::BPF_FUNC_loop, std::ptr::null()) == 1 }
        })
    })
}
