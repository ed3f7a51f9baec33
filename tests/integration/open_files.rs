//! fds[] and d_path(): the current process's open files by descriptor,
//! named as the process sees them, across a mount, with DTrace's fileinfo_t.

use super::*;
use crate::util::DTRACE;

/// Unmounts and removes the test's directory however the test ends.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0.join("mnt")).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn fds_names_open_files_by_descriptor_across_a_mount() {
    let dir = util::scratch_dir("dtrace-fds");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).expect("dir");
    let guard = Mounted(dir.clone());
    let status = std::process::Command::new("mount").args(["-t", "tmpfs", "none"]).arg(&mnt).status().expect("mount");
    assert!(status.success(), "mount tmpfs");
    let deep = mnt.join("a/b/c");
    std::fs::create_dir_all(&deep).expect("deep dir");
    let file = deep.join("data.txt");
    std::fs::write(&file, "0123456789").expect("write");
    // The file opened for reading, writing and appending as descriptor 3 and read at offset 4
    // (pread: the file position stays 0); 1 is /dev/null; 99 is not open.
    let program = format!(
        "import os\nos.write(1, b'')\nos.dup2(os.open('/dev/null', os.O_WRONLY), 1)\nos.closerange(3, 100)\n\
         fd = os.open('{f}', os.O_RDWR | os.O_APPEND)\nassert fd == 3\nos.pread(fd, 3, 4)\nos.close(fd)\n",
        f = file.display()
    );
    let py = script("fds.py", &program);
    let d = r#"
        syscall::pread64:entry /pid == $target && fds[arg0].fi_fs == "tmpfs"/ {
            printf("path %s\nname %s\ndir %s\nfs %s\nmount %s\naccess %d append %d offset %d\n",
                fds[arg0].fi_pathname, fds[arg0].fi_name, fds[arg0].fi_dirname,
                fds[arg0].fi_fs, fds[arg0].fi_mount, fds[arg0].fi_oflags & O_ACCMODE, (fds[arg0].fi_oflags & O_APPEND) != 0, fds[arg0].fi_offset);
            printf("stdout %s\nclosed %s %s\nd_path %s\n", fds[1].fi_pathname, fds[99].fi_pathname,
                fds[-1].fi_name, d_path(&curthread->fs->pwd));
        }
        syscall::write:entry /pid == $target/ { printf("pipe %s\n", fds[arg0].fi_pathname); }"#;
    let mut command = std::process::Command::new(DTRACE);
    command.args(["-qn", d, "-c", &format!("/usr/bin/python3 {py}")]).current_dir(&deep);
    let out = Tracer::spawn_command(command).finish();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let expected = format!(
        "pipe <unknown>\npath {f}\nname data.txt\ndir {d}\nfs tmpfs\nmount {m}\naccess {rdwr} append 1 offset 0\n\
         stdout /dev/null\nclosed <none> <none>\nd_path {d}\n\n",
        f = file.display(),
        d = deep.display(),
        m = mnt.display(),
        rdwr = 2,
    );
    assert_eq!(out.stdout, expected);
    drop(guard);
}
