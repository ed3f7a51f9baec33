//! Tests of the invariants ARCHITECTURE.md states about the code's shape:
//! which module may import which, and what a provider consists of. They
//! read the source tree, so a change that breaks an invariant fails here.

use std::path::{Path, PathBuf};

fn source_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(source_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            files.push(path);
        }
    }
    files
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The code of a file outside its `#[cfg(test)]` module (tests may cross
/// layers to build what they check).
fn non_test_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    // Test modules come last in a file.
    let at = ["#[cfg(test)]\nmod ", "#[cfg(test)]\npub(crate) mod "].iter().filter_map(|m| text.find(m)).min();
    text[..at.unwrap_or(text.len())].to_string()
}

/// Files of `layer` (a directory or file under src/) that mention
/// `crate::<other>` outside tests.
fn imports(layer: &str, other: &str) -> Vec<String> {
    let path = root().join("src").join(layer);
    let files = if path.is_dir() { source_files(&path) } else { vec![path.with_extension("rs")] };
    let needle = format!("crate::{other}");
    files
        .iter()
        .filter(|f| {
            non_test_code(f).lines().any(|l| {
                let code = l.trim_start();
                !code.starts_with("//") && code.contains(&needle) && !code.contains("#[cfg(test)]")
            })
        })
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect()
}

#[test]
fn architecture_layers_import_only_downwards() {
    let forbidden: &[(&str, &[&str])] = &[
        ("defs", &["syntax", "sema", "codegen", "runtime", "consume", "provider", "compile"]),
        ("syntax", &["sema", "codegen", "runtime", "consume", "provider", "compile"]),
        ("provider", &["sema", "codegen", "runtime", "consume", "compile"]),
        ("sema", &["codegen", "runtime", "consume", "compile"]),
        ("codegen", &["syntax", "runtime", "consume", "provider", "compile"]),
        ("runtime", &["consume", "compile"]),
    ];
    let mut wrong = Vec::new();
    for (layer, others) in forbidden {
        for other in *others {
            for file in imports(layer, other) {
                wrong.push(format!("{file} imports crate::{other}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn architecture_the_runtime_names_no_provider() {
    let mut wrong = Vec::new();
    for file in source_files(&root().join("src/runtime")) {
        let code = non_test_code(&file);
        for provider in std::fs::read_dir(root().join("src/provider")).unwrap() {
            let name = provider.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned();
            if code.contains(&format!("provider::{name}")) || code.contains(&format!("bpf/{name}.bpf.c")) {
                wrong.push(format!("{} names provider module {name}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Every entry-program file but the core object's belongs to one provider
/// module, which includes its skeleton; nothing else includes it.
#[test]
fn architecture_each_entry_program_belongs_to_its_provider_module() {
    let mut programs = Vec::new();
    for entry in std::fs::read_dir(root().join("bpf")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".bpf.c") {
            programs.push(stem.to_string());
        }
    }
    assert!(programs.contains(&"core".to_string()));
    for name in programs.iter().filter(|n| *n != "core") {
        let module = root().join("src/provider").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&module)
            .unwrap_or_else(|_| panic!("bpf/{name}.bpf.c has no provider module src/provider/{name}.rs"));
        assert!(
            text.contains(&format!("entry_programs!(\"{name}\")")),
            "{} does not include its skeleton",
            module.display()
        );
    }
    let mut includes: Vec<String> = source_files(&root().join("src"))
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains(".skel.rs\""))
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    includes.sort();
    assert_eq!(includes, ["src/defs/layout.rs", "src/provider/mod.rs"], "skeletons included elsewhere");
}
