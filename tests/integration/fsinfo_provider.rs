//! The fsinfo provider: file-system operations on open files, with the
//! file's fileinfo_t and the bytes moved, checked against a Python program
//! whose calls are known exactly.

use super::*;

#[test]
fn operations_on_a_file_fire_in_order_with_its_path_offsets_and_sizes() {
    let dir = util::scratch_dir("dtrace-fsinfo");
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("fsinfo-target.dat");
    let program = format!(
        "import os\n\
         fd = os.open('{f}', os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)\n\
         for i in range(3):\n    os.write(fd, b'x' * 1000)\n\
         os.fsync(fd)\n\
         os.close(fd)\n\
         fd = os.open('{f}', os.O_RDONLY)\n\
         os.pread(fd, 500, 1000)\n\
         os.lseek(fd, 10, os.SEEK_SET)\n\
         os.fstat(fd)\n\
         os.close(fd)\n",
        f = file.display()
    );
    let py = script("fsinfo.py", &program);
    let d = r#"
        fsinfo::: /pid == $target && args[0]->fi_name == "fsinfo-target.dat"/ {
            printf("%s %s %d %d\n", probename, args[0]->fi_pathname, args[0]->fi_offset, args[1]);
        }
        fsinfo:::write /pid == $target && args[0]->fi_name == "fsinfo-target.dat"/ {
            @fs[args[0]->fi_fs, args[0]->fi_dirname] = count();
        }
        END { printa("fs %s %s %@d\n", @fs); }"#;
    let command = format!("/usr/bin/python3 {py}");
    let out = run(&["-qn", d, "-c", &command]);
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let path = file.display().to_string();
    let ops: Vec<String> = out
        .stdout
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("fs "))
        .map(|l| {
            // The position after open and close is 0 and not asserted.
            let words: Vec<&str> = l.split(' ').collect();
            match words[0] {
                "open" | "close" | "getattr" | "fsync" => format!("{} {}", words[0], words[1]),
                _ => l.to_string(),
            }
        })
        .collect();
    let expected = vec![
        format!("open {path}"),
        format!("write {path} 0 1000"),
        format!("write {path} 1000 1000"),
        format!("write {path} 2000 1000"),
        format!("fsync {path}"),
        format!("close {path}"),
        format!("open {path}"),
        format!("read {path} 1000 500"),
        format!("seek {path} 10 0"),
        format!("getattr {path}"),
        format!("close {path}"),
    ];
    assert_eq!(ops, expected, "{}", out.stdout);
    // The file system and directory of the file.
    let fs_line = out.stdout.lines().find(|l| l.starts_with("fs ")).unwrap_or_default().to_string();
    assert!(fs_line.ends_with(&format!(" {} 3", dir.display())), "{}", out.stdout);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn path_operations_are_listed_and_say_why_they_never_fire() {
    let out = run(&["-l", "-n", "fsinfo:::lookup"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = run(&["-qn", "fsinfo:::rename { trace(1); } BEGIN { exit(0); }"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains("fsinfo:::rename will not fire: the operation names a path"), "{}", out.stderr);
}

#[test]
fn fsinfo_probes_list_their_argument_types() {
    let out = run(&["-lv", "-n", "fsinfo:::read"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("\t\targs[0]: fileinfo_t *\n\t\targs[1]: int\n"), "{}", out.stdout);
}
