//! Compiles the hand-written BPF entry programs in `bpf/` into skeletons.
//!
//! Each `bpf/<name>.bpf.c` becomes `$OUT_DIR/<name>.skel.rs`, included by
//! `src/runtime/skel.rs`. The programs are CO-RE: they are compiled once
//! against `vmlinux/<arch>/vmlinux.h` and relocated by libbpf at load time
//! against the running kernel's BTF.

use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

/// The entry programs, one per provider family.
const ENTRY_PROGRAMS: &[&str] = &["dtrace", "syscall", "profile", "sysinfo", "proc", "io", "ip", "sched", "pid"];

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let vmlinux = PathBuf::from("vmlinux").join(&arch);
    if !vmlinux.join("vmlinux.h").exists() {
        panic!("no vmlinux.h for architecture {arch} in vmlinux/{arch}/");
    }
    println!("cargo:rerun-if-changed=bpf/dtrace.h");
    println!("cargo:rerun-if-changed=bpf/io.h");
    println!("cargo:rerun-if-changed=bpf/ip.h");
    println!("cargo:rerun-if-changed=providers/sysinfo/stats.h");
    println!("cargo:rerun-if-changed={}", vmlinux.join("vmlinux.h").display());
    for name in ENTRY_PROGRAMS {
        let src = format!("bpf/{name}.bpf.c");
        println!("cargo:rerun-if-changed={src}");
        SkeletonBuilder::new()
            .source(&src)
            .obj(out.join(format!("{name}.bpf.o")))
            .clang_args([
                format!("-I{}", vmlinux.display()),
                "-Ibpf".to_string(),
                "-Iproviders".to_string(),
                "-Wall".to_string(),
                "-Wno-unused-function".to_string(),
            ])
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("building {src}: {e:#}"));
    }
}
