//! Compiles the hand-written BPF entry programs in `bpf/` into skeletons.
//!
//! Every `bpf/<name>.bpf.c` becomes `$OUT_DIR/<name>.skel.rs` (and
//! `<name>.bpf.o`): `core` for the runtime's shared maps, one per provider,
//! each included by the module that owns it (`src/provider/<name>.rs`). A new
//! provider's program is picked up without a change here. The programs are
//! CO-RE: compiled once against `vmlinux/<arch>/vmlinux.h` and relocated by
//! libbpf at load time against the running kernel's BTF.

use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let vmlinux = PathBuf::from("vmlinux").join(&arch);
    if !vmlinux.join("vmlinux.h").exists() {
        panic!("no vmlinux.h for architecture {arch} in vmlinux/{arch}/");
    }
    println!("cargo:rerun-if-changed=bpf");
    println!("cargo:rerun-if-changed={}", vmlinux.join("vmlinux.h").display());
    let mut sources: Vec<PathBuf> =
        std::fs::read_dir("bpf").expect("bpf/ exists").map(|entry| entry.expect("bpf/ is readable").path()).collect();
    sources.sort();
    for path in &sources {
        println!("cargo:rerun-if-changed={}", path.display());
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".bpf.c")) else {
            continue;
        };
        SkeletonBuilder::new()
            .source(path)
            .obj(out.join(format!("{name}.bpf.o")))
            .clang_args([
                format!("-I{}", vmlinux.display()),
                "-Ibpf".to_string(),
                "-Wall".to_string(),
                "-Wno-unused-function".to_string(),
            ])
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("building {}: {e:#}", path.display()));
    }
}
