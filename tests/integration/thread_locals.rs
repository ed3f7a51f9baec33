//! Thread-local variables (`self->`) behave alike in task-local storage
//! (Linux 5.12 on) and in hash maps keyed by thread ID (older kernels, or
//! DTRACE_NO_TASK_STORAGE=1): each thread has its own, zero until set,
//! cleared by storing 0 or NULL.

use crate::util::{workload_path, Tracer};

/// Runs `program` on a -c workload, in task storage or not.
fn traced(workload: &str, program: &str, task_storage: bool) -> crate::util::Output {
    let mut command = std::process::Command::new(crate::util::DTRACE);
    command.args(["-q", "-c", &format!("{} {workload}", workload_path().display()), "-n", program]);
    if !task_storage {
        command.env("DTRACE_NO_TASK_STORAGE", "1");
    }
    let out = Tracer::spawn_command(command).finish();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    out
}

#[test]
fn thread_locals_count_clear_and_stay_with_their_thread_in_both_storages() {
    // 50 getppid() calls: the count is cleared at 25 (twice), so it never
    // passes 24; a string is set on each entry and cleared at return.
    let counting = r#"
        syscall::getppid:entry /pid == $target/ { self->n++; self->s = "set"; }
        syscall::getppid:entry /pid == $target && self->n == 25/ { self->n = 0; cleared++; }
        syscall::getppid:return /pid == $target/ { @max = max(self->n); @s[self->s] = count(); self->s = NULL; }
        syscall::getppid:return /pid == $target && self->s == ""/ { emptied++; }
        END { printa("max %@d\n", @max); printa("%s %@d\n", @s); printf("cleared %d emptied %d\n", cleared, emptied); }"#;
    // Threads never see the value their creator set.
    let threads = r#"
        syscall::clone*:entry /pid == $target/ { self->mine = 7; }
        syscall::exit:entry /pid == $target/ { @seen[self->mine] = count(); }
        END { printa("thread saw %d: %@d\n", @seen); }"#;
    for task_storage in [true, false] {
        let out = traced("getppid 50", counting, task_storage);
        assert_eq!(out.stdout, "max 24\nset 50\ncleared 2 emptied 50\n\n", "task storage {task_storage}");
        let out = traced("threads 4", threads, task_storage);
        assert_eq!(out.stdout, "thread saw 0: 4\n\n", "task storage {task_storage}");
    }
}

#[test]
fn members_of_struct_elements_are_assigned_in_place_as_the_guides_rwinfo() {
    // The Dynamic Tracing Guide's "Structs" example (rwinfo.d), on fd 0 and
    // 1 of a dd that does exactly seven reads and seven writes.
    let script = r#"
        struct callinfo { uint64_t ts; uint64_t elapsed; uint64_t calls; size_t maxbytes; };
        struct callinfo i[string];
        syscall::read:entry, syscall::write:entry /pid == $target && arg0 <= 1/ {
            i[probefunc].ts = timestamp;
            i[probefunc].calls++;
            i[probefunc].maxbytes = arg2 > i[probefunc].maxbytes ? arg2 : i[probefunc].maxbytes;
        }
        syscall::read:return, syscall::write:return /i[probefunc].ts != 0 && pid == $target/ {
            i[probefunc].elapsed += timestamp - i[probefunc].ts;
            i[probefunc].ts = 0;
        }
        END {
            printf("read %d %d %d\n", i["read"].calls, i["read"].maxbytes, i["read"].elapsed > 0);
            printf("write %d %d %d\n", i["write"].calls, i["write"].maxbytes, i["write"].elapsed > 0);
            printf("none %d\n", i["close"].calls);
        }"#;
    let out = crate::util::run(&["-qn", script, "-c", "dd if=/dev/zero of=/dev/null bs=4096 count=7 status=none"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for line in ["read 7 4096 1", "write 7 4096 1", "none 0"] {
        assert!(out.stdout.lines().any(|l| l == line), "{line}:\n{}", out.stdout);
    }
}
