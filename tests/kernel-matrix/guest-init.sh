#!/bin/busybox sh
# /init of the kernel-matrix guests (tests/kernel-matrix/run.sh): runs the dtrace smoke tests,
# prints "RESULT <n> <name> PASS|FAIL ..." per test, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
up() { cut -d' ' -f1 /proc/uptime; }
echo "=== guest up: $(uname -r) uptime=$(up)s"
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko || echo "insmod $m failed"; done
echo "=== btf: $(ls -l /sys/kernel/btf/vmlinux 2>&1) memlock=$(ulimit -l) disk=$(ls /dev/vda 2>&1)"

# t <id> <name> <dtrace args...>: run dtrace bounded, show its output, leave rc in $RC
t() {
  ID=$1; NAME=$2; shift 2
  echo "=== TEST $ID $NAME (uptime $(up)s): dtrace $*"
  S=$(up)
  timeout -s ${SIG:-TERM} ${TMO:-60} /bin/dtrace "$@" > /tmp/out.$ID 2> /tmp/err.$ID
  RC=$?
  E=$(up)
  TIME=$(awk "BEGIN{printf \"%.1f\", $E - $S}")
  echo "--- stdout ($(wc -l < /tmp/out.$ID) lines)"
  head -n 60 /tmp/out.$ID
  n=$(wc -l < /tmp/err.$ID)
  echo "--- stderr ($n lines)"
  if [ "$n" -gt 150 ]; then head -n 40 /tmp/err.$ID; echo "[... $((n - 120)) lines ...]"; tail -n 80 /tmp/err.$ID
  else cat /tmp/err.$ID; fi
  echo "--- rc=$RC time=${TIME}s"
}
# r <ok 0|1> <detail>: print the result line of the last test
r() {
  if [ "$1" = 0 ]; then echo "RESULT $ID $NAME PASS rc=$RC ${TIME}s $2"
  else echo "RESULT $ID $NAME FAIL rc=$RC ${TIME}s $2"; fi
}
# a number line in /tmp/out.$ID (aggregation without keys) -> its value
num() { grep -E '^ *[0-9]+ *$' /tmp/out.$ID | tail -1 | tr -d ' '; }
# aggregation rows "key  count"
rows() { grep -cE '^ *[a-z_0-9]+ +[0-9]+ *$' /tmp/out.$ID; }

# 1. BEGIN + printf
t 1 begin-printf -qn 'BEGIN { printf("hello %d\n", 42); exit(0); }'
grep -qx 'hello 42' /tmp/out.1 && [ $RC = 0 ]; r $? ""

# 2. one system-call probe (per-tracepoint path, tracefs mounted by dtrace itself)
(while :; do sh -c 'echo $PPID' > /dev/null; done) & L=$!
t 2 syscall-getppid -qn 'syscall::getppid:entry { @ = count(); } tick-1s { exit(0); }'
kill $L; wait $L 2>/dev/null
C=$(num); [ $RC = 0 ] && [ -n "$C" ]; r $? "count=${C:-none}"

# 3. every system call (raw tracepoint path)
t 3 syscall-all -qn 'syscall:::entry { @[probefunc] = count(); } tick-1s { exit(0); }'
N=$(rows); [ $RC = 0 ] && [ "$N" -gt 0 ]; r $? "rows=$N"

# 4. kernel BTF member access
t 4 curthread -qn 'BEGIN { printf("%s %d\n", curthread->comm, curthread->pid > 0); exit(0); }'
grep -qx 'dtrace 1' /tmp/out.4 && [ $RC = 0 ]; r $? "out=$(head -1 /tmp/out.4)"

# 5. sysinfo, with forks, execs, reads, writes and block I/O running
(while :; do ls / > /dev/null; cat /bin/busybox > /dev/null; echo x > /tmp/f; cat /tmp/f > /dev/null
  echo 3 > /proc/sys/vm/drop_caches; dd if=/dev/vda of=/dev/null bs=64k count=16 2> /dev/null; done) & L=$!
t 5 sysinfo -qn 'sysinfo:::pswitch,sysinfo:::inv_swtch,sysinfo:::sysfork,sysinfo:::nthreads,sysinfo:::sysexec,sysinfo:::readch,sysinfo:::writech,sysinfo:::bread,sysinfo:::lread,sysinfo:::xcalls,sysinfo:::trap,sysinfo:::namei { @[probename] = count(); } tick-1s { exit(0); }'
kill $L; wait $L 2>/dev/null
N=$(rows); [ $RC = 0 ] && [ "$N" -gt 0 ]
r $? "rows=$N fired=$(grep -E '^ *[a-z_0-9]+ +[0-9]+ *$' /tmp/out.5 | awk '{print $1}' | sort | tr '\n' ,) warnings=$(grep -c 'will not fire' /tmp/err.5)"

# 6. profile
t 6 profile -qn 'profile-97 { @ = count(); } tick-1s { exit(0); }'
C=$(num); [ $RC = 0 ] && [ -n "$C" ] && [ "$C" -gt 0 ]; r $? "count=${C:-none}"

# 7. aggregations of every function, keyed and keyless, with printa
t 7 aggregations -qn 'BEGIN { @c["a"] = count(); @s = sum(5); @m = max(-3); @a = avg(10); @d = stddev(4); @q = quantize(1000); @l = lquantize(7, 0, 10, 2); @ll = llquantize(55, 10, 0, 3, 10); printa("%s %@d\n", @c); exit(0); }'
grep -qx 'a 1' /tmp/out.7 && grep -q Distribution /tmp/out.7 && [ $RC = 0 ]; r $? "lines=$(wc -l < /tmp/out.7)"

# 8. string subroutines, associative arrays, clause-local strings (bounded loops on older verifiers)
t 8 subroutines -qn 'BEGIN { a["k", 1] = strjoin("ab", "cd"); this->s = basename("/x/y/z"); printf("%s %s %s %s %d %s\n", a["k", 1], substr("hello", 1, 3), this->s, dirname("/x/y/z"), strlen("four"), lltostr(-12)); exit(0); }'
grep -qx 'abcd ell z /x/y 4 -12' /tmp/out.8 && [ $RC = 0 ]; r $? "out=$(head -1 /tmp/out.8)"

# 10. the searching, splitting and address subroutines together in one clause (verifier cost)
t 10 subroutines-2 -qn 'BEGIN { printf("%d %d %s %s %s %s %s\n", index("hello", "lo"), rindex("a/b/c", "/"), strstr("k=v", "="), strtok("x:y", ":"), cleanpath("/a/../b//c"), inet_ntop(AF_INET6, (void *)&curthread->comm), strtok(NULL, ":")); exit(0); }'
# (comm's bytes after "dtrace" and its NUL are whatever an earlier name left there)
grep -qE '^3 3 =v x /b/c 6474:7261:6365:[0-9a-f:]* y$' /tmp/out.10 && [ $RC = 0 ]; r $? "out=$(head -1 /tmp/out.10)"

# 9. stack() as an aggregation key, symbolized
(while :; do sh -c 'echo $PPID' > /dev/null; done) & L=$!
t 9 stack -qn 'syscall::getppid:entry { @[stack()] = count(); } tick-1s { exit(0); }'
kill $L; wait $L 2>/dev/null
grep -q 'vmlinux`' /tmp/out.9 && [ $RC = 0 ]; r $? "frames=$(grep -c 'vmlinux`' /tmp/out.9)"

# 10. D types against the guest's BTF and kallsyms: a kernel variable, curpsinfo's translator,
# pointer arithmetic on a char array (the guests run with one CPU)
t 11 kernel-types -qn 'BEGIN { printf("%d %d %s %d %c %d\n", `jiffies > 0, *(unsigned int *)&`nr_cpu_ids, curpsinfo->pr_fname, curpsinfo->pr_pid == pid, *(curthread->comm + 1), curthread->signal->is_child_subreaper); exit(0); }'
grep -qx '1 1 dtrace 1 t 0' /tmp/out.11 && [ $RC = 0 ]; r $? "out=$(head -1 /tmp/out.11)"

# 12. alloca/bcopy, print() and vtimestamp (its context-switch program on raw_tp sched_switch)
t 12 alloca-print-vtime -qn 'BEGIN { this->p = alloca(8); bcopy(curthread->comm, this->p, 7); printf("%s %d\n", stringof(this->p), vtimestamp < 1000000000); print(10); exit(0); }'
grep -qx 'dtrace 1' /tmp/out.12 && grep -qx 'int 0xa' /tmp/out.12 && [ $RC = 0 ]; r $? "out=$(head -2 /tmp/out.12 | tr '\n' '|')"

# 13. speculations; commit() needs BPF compare-and-exchange (Linux 5.12+): older kernels
# must refuse with a message that says so.
t 13 speculation -qn 'BEGIN { s = speculation(); } BEGIN { speculate(s); printf("kept\n"); } BEGIN { commit(s); } BEGIN { exit(0); }'
{ grep -qx kept /tmp/out.13 && [ $RC = 0 ]; } || { [ $RC = 1 ] && grep -q '5.12' /tmp/err.13; }; r $? "out=$(head -1 /tmp/out.13) err=$(head -1 /tmp/err.13)"

# 14. the proc provider: exec-success with curpsinfo, exit with its reason, create's psinfo_t
(while :; do /bin/false; sh -c 'kill -KILL $$'; sleep 0.2; done) & L=$!
t 14 proc -qn 'proc:::exec-success /execname == "false"/ { printf("exec %s\n", curpsinfo->pr_psargs); } proc:::exit /execname == "false"/ { printf("exit %d\n", args[0]); } proc:::create { n++; } tick-3s { printf("created %d\n", n > 0); exit(0); }'
kill $L; wait $L 2>/dev/null
grep -qx 'exec /bin/false' /tmp/out.14 && grep -qx 'exit 1' /tmp/out.14 && grep -qx 'created 1' /tmp/out.14 && [ $RC = 0 ]; r $? "out=$(head -3 /tmp/out.14 | tr '\n' '|')"

# 15. the io provider: buffered writes with fsync and direct reads of a file on /dev/vda (an
# ext2 file system mounted by the ext4 driver), with device, file, direction and bytes. The
# writes start once dtrace has printed "ready" (BEGIN). Linux 5.10 refuses hash map keys over
# 512 bytes: the seed's fileio.d key (dev_statname, fi_name, execname) fits because char
# array keys take their own length.
mkdir -p /mnt; mke2fs -q -F /dev/vda > /dev/null 2>&1; mount -t ext4 /dev/vda /mnt || echo "mount failed"
(i=0; while ! grep -q ready /tmp/out.15 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  dd if=/dev/zero of=/mnt/f bs=64k count=4 conv=fsync 2> /dev/null
  dd if=/mnt/f of=/dev/null bs=64k iflag=direct 2> /dev/null) & L=$!
t 15 io -qn 'BEGIN { printf("ready\n"); } io:::start /args[2]->fi_name == "f"/ { @[args[2]->fi_pathname, args[0]->b_flags & B_READ] = sum(args[0]->b_bcount); } io:::start /args[2]->fi_name == "f"/ { @dev[args[1]->dev_statname] = count(); @mnt[args[2]->fi_mount] = count(); } io:::start { @fileio[args[1]->dev_statname, args[2]->fi_name, execname] = sum(args[0]->b_bcount); } io:::done /args[2]->fi_name == "f"/ { done++; } io:::wait-start { w++; } tick-5s { printf("done %d waits %d\n", done > 0, w > 0); printa("%s %d %@d\n", @); printa("dev %s", @dev); printa(" %s\n", @mnt); printa("fileio %s %s %s %@d\n", @fileio); exit(0); }'
wait $L 2>/dev/null; umount /mnt
grep -qx '/mnt/f 0 262144' /tmp/out.15 && grep -qx '/mnt/f 64 262144' /tmp/out.15 && grep -qx 'dev vda /mnt' /tmp/out.15 && grep -qx 'fileio vda f dd 524288' /tmp/out.15 && grep -qx 'done 1 waits 1' /tmp/out.15 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.15)"

# 15b. io:::done of failing reads (/dev/vdb: qemu's blkdebug fails every read): B_ERROR, EIO.
(i=0; while ! grep -q ready /tmp/out.18 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  dd if=/dev/vdb of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null) & L=$!
t 18 io-error -qn 'BEGIN { printf("ready\n"); } io:::done /args[1]->dev_statname == "vdb"/ { printf("done %s %d %d %d\n", args[0]->b_flags & B_ERROR ? "error" : "ok", args[0]->b_error, args[0]->b_bcount, args[0]->b_resid); exit(0); } tick-5s { exit(0); }'
wait $L 2>/dev/null
grep -qx 'done error 5 4096 4096' /tmp/out.18 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.18)"

# 16. the sched provider: on-cpu fires for the thread taking the CPU (its execname, self->),
# off-cpu in the thread leaving it, sleep before it blocks.
(while :; do sleep 0.1; done) & L=$!
t 16 sched -qn 'BEGIN { same = 0; } sched:::on-cpu /execname == "sleep"/ { on++; self->on = 1; same += pid == curthread->tgid; } sched:::off-cpu /self->on/ { off++; self->on = 0; } sched:::sleep /execname == "sleep"/ { sl++; } tick-2s { printf("%d %d %d %d\n", on > 0, off > 0, sl > 0, same == on); exit(0); }'
kill $L; wait $L 2>/dev/null
grep -qx '1 1 1 1' /tmp/out.16 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.16)"

# 17. the ip provider: pings over loopback, sent and received, with the ICMP header fields.
ip link set lo up
(i=0; while ! grep -q ready /tmp/out.17 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  ping -c 3 -s 100 127.0.0.1 > /dev/null 2>&1) & L=$!
t 17 ip -qn 'BEGIN { printf("ready\n"); } ip:::send /args[2]->ip_daddr == "127.0.0.1"/ { @s[args[4]->ipv4_protostr, args[2]->ip_plength] = count(); } ip:::receive /args[2]->ip_saddr == "127.0.0.1"/ { @r[args[3]->if_name] = count(); } tick-4s { printa("send %s %d %@d\n", @s); printa("receive %s %@d\n", @r); exit(0); }'
wait $L 2>/dev/null
grep -qx 'send ICMP 108 6' /tmp/out.17 && grep -qx 'receive lo 6' /tmp/out.17 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.17)"

# 19. the pid provider on dtrace's own main() in a -c child: one uprobe each before Linux 6.6,
# a multi-uprobe link since; Linux 5.10 has no BPF attach cookies and must say so in one line.
t 19 pid -qn 'pid$target::main:entry { printf("main %d\n", pid == $target); }' -c '/bin/dtrace -V'
case $(uname -r) in
  5.10.*) [ $RC = 1 ] && [ "$(wc -l < /tmp/err.19)" -le 2 ] && ! grep -q panicked /tmp/err.19 ;;
  *) grep -qx 'main 1' /tmp/out.19 && [ $RC = 0 ] ;;
esac; r $? "out=$(tr '\n' '|' < /tmp/out.19) err=$(head -2 /tmp/err.19 | tr '\n' '|')"

# 20. curlwpsinfo's state from task_struct.state (before 5.14) or __state, and io's arg0: the
# same request at start and at done.
(while :; do sleep 0.1; dd if=/dev/vda of=/dev/null bs=4k count=4 iflag=direct 2> /dev/null; done) & L=$!
t 20 lwpsinfo-io -qn 'BEGIN { printf("%c %d\n", curlwpsinfo->pr_sname, curlwpsinfo->pr_state == SONPROC); } sched:::off-cpu /execname == "sleep"/ { @s[curlwpsinfo->pr_sname] = count(); } io:::start { s[arg0] = 1; } io:::done /s[arg0]/ { m = 1; } tick-2s { printf("io %d\n", m); printa("state %c\n", @s); exit(0); }'
kill $L; wait $L 2>/dev/null
grep -qx 'O 1' /tmp/out.20 && grep -qx 'io 1' /tmp/out.20 && grep -qx 'state S' /tmp/out.20 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.20)"

# 21. USDT: a static program's probe (arguments, exact count, semaphore set while traced):
# one uprobe per site before Linux 6.6, a multi-uprobe link since; 5.10 has no attach cookies.
t 21 usdt -qn 'myapp$target:::tick { printf("tick %d %d\n", arg0, arg1); }' -c '/bin/usdtprog 3'
case $(uname -r) in
  5.10.*) [ $RC = 1 ] && grep -q 'attach cookies' /tmp/err.21 && ! grep -q panicked /tmp/err.21 ;;
  *) [ "$(grep -c '^tick ' /tmp/out.21)" = 3 ] && grep -qx 'tick 2 -2' /tmp/out.21 && grep -qx 'traced 3' /tmp/out.21 && [ $RC = 0 ] ;;
esac; r $? "out=$(tr '\n' '|' < /tmp/out.21) err=$(head -2 /tmp/err.21 | tr '\n' '|')"

# 22-23. fbt: five dd runs of three 4-byte reads of one file: exactly 15 vfs_read entries named by
# the typed args[0] (struct file *), each returning 4 in arg1; first by BPF trampolines (fentry/
# fexit), then by kprobes (DTRACE_FBT_NO_FENTRY).
head -c 100 /bin/busybox > /tmp/fbtfile
fbt_reads() {
  (i=0; while ! grep -q ready /tmp/out.$1 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
    for k in 1 2 3 4 5; do dd if=/tmp/fbtfile of=/dev/null bs=4 count=3 2> /dev/null; done) & L=$!
  t $1 $2 -qn 'BEGIN { printf("ready\n"); } fbt::vfs_read:entry /execname == "dd" && stringof(args[0]->f_path.dentry->d_name.name) == "fbtfile"/ { n++; self->in = 1; } fbt::vfs_read:return /self->in/ { self->in = 0; @b[arg1] = count(); } fbt::ksys_read:entry /execname == "dd"/ { k++; } tick-4s { printf("reads %d\n", n); printa("bytes %d %@d\n", @b); printf("ksys %d\n", k); exit(0); }'
  wait $L 2>/dev/null
  # ksys_read's one clause has a predicate decided ahead of the entry program (a guard).
  K=$(awk '$1 == "ksys" { print $2 }' /tmp/out.$1)
  grep -qx 'reads 15' /tmp/out.$1 && grep -qx 'bytes 4 15' /tmp/out.$1 && [ "${K:-0}" -ge 15 ] && [ $RC = 0 ]
  r $? "out=$(tr '\n' '|' < /tmp/out.$1) err=$(head -2 /tmp/err.$1 | tr '\n' '|')"
}
fbt_reads 22 fbt-fentry
export DTRACE_FBT_NO_FENTRY=1
fbt_reads 23 fbt-kprobe
unset DTRACE_FBT_NO_FENTRY

# 28, 29. caller at fbt entry, on trampolines and on kprobes: dd's reads come from ksys_read.
# (A return probe on the same function is left out: before 5.11 a kretprobe
# replaces the return address the entry probe would see.)
fbt_caller() {
  (while :; do dd if=/tmp/fbtfile of=/dev/null bs=4 count=3 2> /dev/null; done) & L=$!
  t $1 $2 -qn 'fbt::vfs_read:entry /execname == "dd"/ { @[probename, func(caller)] = count(); } fbt::vfs_read:entry /execname == "dd" && !s/ { s = 1; stack(3); } tick-1s { exit(0); }'
  kill $L; wait $L 2>/dev/null
  grep -qE '^ *entry +vmlinux`ksys_read +[0-9]+' /tmp/out.$1 && ! grep -qE '^ *entry +0x0 ' /tmp/out.$1 && [ $RC = 0 ]
  r $? "out=$(tr '\n' '|' < /tmp/out.$1) err=$(head -2 /tmp/err.$1 | tr '\n' '|')"
}
fbt_caller 28 fbt-caller-fentry
export DTRACE_FBT_NO_FENTRY=1
fbt_caller 29 fbt-caller-kprobe
unset DTRACE_FBT_NO_FENTRY

# 24. fbt wildcards aggregate by probefunc; 25. the listing has every traceable function.
# The reads start once tracing has, and tracing ends when they have (the exec of /bin/true):
# a timed window was too short for a TCG guest's dd loop more than once.
(i=0; while ! grep -q ready /tmp/out.24 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  for k in 1 2 3; do dd if=/tmp/fbtfile of=/dev/null bs=4 count=3 2> /dev/null; ls /tmp > /dev/null; done; /bin/true) & L=$!
t 24 fbt-wildcard -qn 'BEGIN { printf("ready\n"); } fbt::vfs_*:entry { @[probefunc] = count(); } proc:::exec-success /execname == "true"/ { exit(0); }'
wait $L 2>/dev/null
N=$(rows); [ $RC = 0 ] && [ "$N" -gt 1 ] && grep -qE '^ *vfs_read +[0-9]+' /tmp/out.24
r $? "rows=$N out=$(tr '\n' '|' < /tmp/out.24 | head -c 160) err=$(head -1 /tmp/err.24)"
# 30. @[execname] keys are the comm alone: before 2025 kernels' comm helper leaves the stack's bytes
# after the NUL, and a key that kept them split one program into many (printed as hex dumps).
# The five dd runs start once tracing has (a loop running beside dtrace's start-up may not get the
# one CPU in time).
(i=0; while ! grep -q ready /tmp/out.30 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  for k in 1 2 3 4 5; do dd if=/tmp/fbtfile of=/dev/null bs=4 count=3 2> /dev/null; done) & L=$!
t 30 fbt-execname-keys -qn 'BEGIN { printf("ready\n"); } fbt::vfs_read:entry { @[execname] = count(); } tick-4s { exit(0); }'
wait $L 2>/dev/null
DD=$(awk '$1 == "dd" { print $2 }' /tmp/out.30); D=$(awk 'NF == 2 { print $1 }' /tmp/out.30 | sort | uniq -d | head -1)
[ $RC = 0 ] && [ "${DD:-0}" -ge 15 ] && ! grep -q 0123456789abcdef /tmp/out.30 && [ -z "$D" ]; r $? "dd=$DD repeated=$D"
t 25 fbt-list -l -P fbt
N=$(wc -l < /tmp/out.25); [ $RC = 0 ] && [ "$N" -gt 10000 ]; r $? "probes=$N"

# 26. attaching several hundred functions (one multi-kprobe link where the kernel has them;
# 6.1 has none and takes ~40 s for its trampolines under TCG, hence the longer bound).
TMO=180
t 26 fbt-many -n 'fbt::tcp_*:entry,fbt::security_*:entry { @ = count(); } BEGIN { exit(0); }'
TMO=60
[ $RC = 0 ]; r $? "$(head -1 /tmp/err.26)"

# 27. sdt and rawtp: five execs of /bin/true, counted exactly by both.
(i=0; while ! grep -q ready /tmp/out.27 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  for k in 1 2 3 4 5; do /bin/true; done) & L=$!
t 27 sdt-rawtp -qn 'BEGIN { printf("ready\n"); } sdt:sched::sched_process_exec /stringof(args[0]) == "/bin/true"/ { s++; } rawtp:sched::sched_process_exec /stringof(args[0]->comm) == "true"/ { r++; } tick-3s { printf("sdt %d rawtp %d\n", s, r); exit(0); }'
wait $L 2>/dev/null
grep -qx 'sdt 5 rawtp 5' /tmp/out.27 && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.27) err=$(head -2 /tmp/err.27 | tr '\n' '|')"

# Diagnostics (kernel command line DTMATRIX_EXTRA=1): the same probes without tick-N (profile),
# stopped by SIGINT, and single sysinfo probes.
# 31. tcp over loopback (busybox httpd and wget): one connection each way, its bytes, and a refused
# one; the socket fields the entry programs read by CO-RE (tcp_sock, icsk_delack_max) on each kernel.
mkdir -p /tmp/www; dd if=/dev/zero of=/tmp/www/f bs=1000 count=50 2> /dev/null
httpd -p 127.0.0.1:8080 -h /tmp/www
(i=0; while ! grep -q ready /tmp/out.31 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  wget -q -O /dev/null http://127.0.0.1:8080/f; wget -q -O /dev/null http://127.0.0.1:8081/f) & L=$!
t 31 tcp -qn 'BEGIN { printf("ready\n"); }
  tcp:::connect-established /args[3]->tcps_rport == 8080/ { @e["connect"] = count(); }
  tcp:::accept-established /args[3]->tcps_lport == 8080 && !args[3]->tcps_active/ { @e["accept"] = count(); }
  tcp:::connect-refused /args[3]->tcps_rport == 8081/ { @e["refused"] = count(); }
  tcp:::state-change /args[3]->tcps_lport == 8080 && args[5]->tcps_state == TCP_STATE_SYN_RECEIVED &&
    args[3]->tcps_state == TCP_STATE_ESTABLISHED/ { @e["server-established"] = count(); }
  tcp:::receive /args[4]->tcp_sport == 8080/ { @b = sum(args[2]->ip_plength - args[4]->tcp_offset); }
  tick-4s { printa("%s %@d\n", @e); printa("bytes %@d\n", @b); exit(0); }'
wait $L 2>/dev/null; killall httpd 2> /dev/null
B=$(awk '$1 == "bytes" { print $2 }' /tmp/out.31)
[ $RC = 0 ] && grep -qx 'connect 1' /tmp/out.31 && grep -qx 'accept 1' /tmp/out.31 && grep -qx 'refused 1' /tmp/out.31 &&
  grep -qx 'server-established 1' /tmp/out.31 && [ "${B:-0}" -gt 50000 ] && [ "${B:-0}" -lt 51000 ]; r $? "out=$(tr '\n' '|' < /tmp/out.31)"

# 32. lockstat: three shells taking lo down and up, each holding rtnl_mutex across an RCU grace
# period (synchronize_net), so each sleeps on the other's: adaptive-block on the static
# vmlinux`rtnl_mutex, named by %a from kallsyms' data symbols, the wait in arg1. 5.10 has no
# contention tracepoints: dtrace says so and runs.
for k in 1 2 3; do (while :; do ip link set lo down; ip link set lo up; done) & done
t 32 lockstat -qn 'lockstat:::adaptive-block { @[arg0] = count(); @w = min(arg1); } tick-3s { printa("%a %@d\n", @); printa("min %@d\n", @w); exit(0); }'
for k in $(jobs -p); do kill $k; done; wait 2> /dev/null; ip link set lo up
case $(uname -r) in
  5.10.*) [ $RC = 0 ] && grep -q 'no contention_begin and contention_end tracepoints' /tmp/err.32 ;;
  *) W=$(awk '$1 == "min" { print $2 }' /tmp/out.32)
    [ $RC = 0 ] && grep -qE '^vmlinux`rtnl_mutex [0-9]+$' /tmp/out.32 && [ "${W:-0}" -gt 0 ] ;;
esac; r $? "out=$(tr '\n' '|' < /tmp/out.32 | cut -c1-300) err=$(head -2 /tmp/err.32 | tr '\n' '|')"

# 33. vminfo: a copy of busybox on the ext4 disk (as /mnt/true), run after the page cache is
# dropped, faults its text in from the disk (maj_fault, by the major-faults software event, and
# pgpgin from block_bio_queue: before 5.11 its queue-first prototype); the shell's forks give
# cow_fault and as_fault (the x86 page fault tracepoints).
mount -t ext4 /dev/vda /mnt && cp /bin/busybox /mnt/true && sync && echo 3 > /proc/sys/vm/drop_caches
(i=0; while ! grep -q ready /tmp/out.33 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  /mnt/true) & L=$!
t 33 vminfo -qn 'BEGIN { printf("ready\n"); } vminfo:::maj_fault /execname == "true"/ { @["maj"] = sum(arg0); }
  vminfo:::pgpgin { @["pgpgin"] = sum(arg0); } vminfo:::cow_fault { @["cow"] = sum(arg0); }
  vminfo:::as_fault { @["as"] = sum(arg0); } tick-3s { printa("%s %@d\n", @); exit(0); }'
wait $L 2> /dev/null; umount /mnt
for k in maj pgpgin cow as; do
  V=$(awk -v k=$k '$1 == k { print $2 }' /tmp/out.33); [ "${V:-0}" -gt 0 ] || break
done; [ "${V:-0}" -gt 0 ] && [ $RC = 0 ]; r $? "out=$(tr '\n' '|' < /tmp/out.33) err=$(head -2 /tmp/err.33 | tr '\n' '|')"

# 34. sched's queues, ticks and CPU numbers on each kernel (task_struct->cpu before 5.16, no
# delayed dequeue before 6.12, the tick's hrtimer named tick_sched_timer before 6.9): three
# sleeps are enqueued and dequeued alike, on CPU 0; a busy loop takes clock ticks. /bin/true
# ends it, again every 2 s until it has: once (5.10, CI) the first exec-success went unseen;
# @execs tells, if the test times out, which execs were seen.
(i=0; while ! grep -q ready /tmp/out.34 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  sleep 0.1; sleep 0.1; sleep 0.1; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done
  i=0; while [ $i -lt 10 ] && ! grep -q '^cpu' /tmp/out.34; do /bin/true; sleep 2; i=$((i+1)); done) & L=$!
t 34 sched-queues -qn 'BEGIN { printf("ready\n"); }
  proc:::exec-success { @execs[execname] = count(); }
  sched:::enqueue /args[1]->pr_fname == "sleep"/ { @["enqueue"] = count(); @c = max(args[2]->cpu_id); }
  sched:::dequeue /args[1]->pr_fname == "sleep"/ { @["dequeue"] = count(); @c = max(args[2]->cpu_id); }
  sched:::tick { @["tick"] = count(); }
  proc:::exec-success /execname == "true"/ { printa("%s %@d\n", @); printa("cpu %@d\n", @c); exit(0); }'
kill $L 2> /dev/null; wait $L 2> /dev/null
E=$(awk '$1 == "enqueue" { print $2 }' /tmp/out.34); D=$(awk '$1 == "dequeue" { print $2 }' /tmp/out.34)
T=$(awk '$1 == "tick" { print $2 }' /tmp/out.34)
[ $RC = 0 ] && [ "${E:-0}" -ge 3 ] && [ "$E" = "$D" ] && grep -qx 'cpu 0' /tmp/out.34 && [ "${T:-0}" -gt 0 ] && [ ! -s /tmp/err.34 ]
r $? "out=$(tr '\n' '|' < /tmp/out.34) err=$(head -2 /tmp/err.34 | tr '\n' '|')"

# 35. fsinfo on each kernel (the fd table, struct file and the path walk by CO-RE): dd reads
# the 100-byte /tmp/fbtfile 4 bytes at a time, 25 reads and one at the end of the file.
(i=0; while ! grep -q ready /tmp/out.35 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  dd if=/tmp/fbtfile of=/dev/null bs=4 2> /dev/null; /bin/true) & L=$!
t 35 fsinfo -qn 'BEGIN { printf("ready\n"); }
  fsinfo:::read /execname == "dd" && args[0]->fi_name == "fbtfile"/ { @r[args[0]->fi_pathname] = count(); @b = sum(args[1]); @last = max(args[0]->fi_offset); }
  proc:::exec-success /execname == "true"/ { printa("%s %@d\n", @r); printa("bytes %@d\n", @b); printa("last %@d\n", @last); exit(0); }'
wait $L 2> /dev/null
grep -qx '/tmp/fbtfile 26' /tmp/out.35 && grep -qx 'bytes 100' /tmp/out.35 && grep -qx 'last 100' /tmp/out.35 && [ $RC = 0 ]
r $? "out=$(tr '\n' '|' < /tmp/out.35) err=$(head -2 /tmp/err.35 | tr '\n' '|')"

# 36. fds[] and d_path() (the walk reads path, dentry and mount at BTF offsets) and stack()
# without the BPF program's frames: dd reads /tmp/fbtfile (the root mount) and writes /dev/null
# (devtmpfs, mounted at /dev).
(i=0; while ! grep -q ready /tmp/out.36 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  dd if=/tmp/fbtfile of=/dev/null bs=100 count=1 2> /dev/null; /bin/true) & L=$!
t 36 fds -qn 'BEGIN { printf("ready\n"); }
  syscall::read:entry /execname == "dd" && fds[arg0].fi_name == "fbtfile"/ {
    printf("r %s %s %s %d\n", fds[arg0].fi_pathname, fds[arg0].fi_dirname, fds[arg0].fi_mount, fds[arg0].fi_oflags & O_ACCMODE); stack(); }
  syscall::write:entry /execname == "dd" && fds[arg0].fi_name == "null"/ { printf("w %s %s %s\n", fds[arg0].fi_pathname, fds[arg0].fi_mount, fds[arg0].fi_fs); }
  proc:::exec-success /execname == "true"/ { exit(0); }'
wait $L 2> /dev/null
grep -qx 'r /tmp/fbtfile /tmp / 0' /tmp/out.36 && grep -qx 'w /dev/null /dev devtmpfs' /tmp/out.36 \
  && grep -q 'vmlinux`' /tmp/out.36 && ! grep -q 'bpf' /tmp/out.36 && [ $RC = 0 ]
r $? "out=$(tr '\n' '|' < /tmp/out.36 | head -c 400) err=$(head -2 /tmp/err.36 | tr '\n' '|')"

# 37. uregs[] reads pt_regs by bpf_task_pt_regs (Linux 5.15 on): BEGIN fires in dtrace's own
# system call, its user pc and sp saved; 5.10 has no such helper and dtrace says so.
t 37 uregs -qn 'BEGIN { printf("%d\n", uregs[R_PC] != 0 && uregs[R_SP] != 0); exit(0); }'
case $(uname -r) in
  5.10.*) [ $RC = 1 ] && grep -q 'bpf_task_pt_regs helper (Linux 5.15' /tmp/err.37 ;;
  *) [ $RC = 0 ] && grep -qx 1 /tmp/out.37 && [ ! -s /tmp/err.37 ] ;;
esac; r $? "out=$(tr '\n' '|' < /tmp/out.37) err=$(head -2 /tmp/err.37 | tr '\n' '|')"

# 38. json(): a state machine over every byte of strsize, two calls in one clause (verifier cost
# on each kernel's verifier)
t 38 json -qn 'BEGIN { j = "{\"a\": {\"b\": [1, {\"c\": \"deep\"}]}, \"t\": true}"; printf("%s %s\n", json(j, "a.b[1].c"), json(j, "t")); exit(0); }'
grep -qx 'deep true' /tmp/out.38 && [ $RC = 0 ]; r $? "out=$(head -1 /tmp/out.38) err=$(head -2 /tmp/err.38 | tr '\n' '|')"

# 39. chill(): 50 ms in a bpf_loop() callback whose BTF func_info each kernel checks (5.17 on);
# 5.10 has no bpf_loop, and its bounded spin makes so long a chill an illegal operation.
t 39 chill -wqn 'BEGIN { t = timestamp; chill(50000000); printf("%d\n", timestamp - t >= 50000000); exit(0); } ERROR { printf("fault %d\n", arg4); exit(0); }'
case $(uname -r) in
  5.10.*) [ $RC = 0 ] && grep -qx 'fault 3' /tmp/out.39 ;;
  *) [ $RC = 0 ] && grep -qx 1 /tmp/out.39 && [ ! -s /tmp/err.39 ] ;;
esac; r $? "out=$(tr '\n' '|' < /tmp/out.39) err=$(head -2 /tmp/err.39 | tr '\n' '|')"

if [ -n "${DTMATRIX_EXTRA:-}" ]; then
  SIG=INT TMO=3
  (while :; do sh -c 'echo $PPID' > /dev/null; done) & L=$!
  t 7 syscall-getppid-int -qn 'syscall::getppid:entry { @ = count(); }'
  kill $L; wait $L 2>/dev/null
  C=$(num); [ -n "$C" ]; r $? "count=${C:-none}"
  t 8 syscall-all-int -qn 'syscall:::entry { @[probefunc] = count(); }'
  N=$(rows); [ "$N" -gt 0 ]; r $? "rows=$N"
  (while :; do ls / > /dev/null; cat /bin/busybox > /dev/null; echo x > /tmp/f; cat /tmp/f > /dev/null
    echo 3 > /proc/sys/vm/drop_caches; dd if=/dev/vda of=/dev/null bs=64k count=16 2> /dev/null; done) & L=$!
  t 9 sysinfo-all-int -qn 'sysinfo::: { @[probename] = count(); }'
  N=$(rows); [ "$N" -gt 0 ]; r $? "rows=$N fired=$(grep -E '^ *[a-z_0-9]+ +[0-9]+ *$' /tmp/out.9 | awk '{print $1}' | sort | tr '\n' ,)"
  for p in pswitch sysexec readch namei trap; do
    t 10 sysinfo-$p-int -qn "sysinfo:::$p { @ = count(); }"
    C=$(num); [ -n "$C" ] && [ "$C" -gt 0 ]; r $? "count=${C:-none}"
  done
  SIG=TERM TMO=60
  t 11 sysinfo-pswitch-tick -qn 'sysinfo:::pswitch { @ = count(); } tick-1s { exit(0); }'
  C=$(num); [ $RC = 0 ] && [ -n "$C" ] && [ "$C" -gt 0 ]; r $? "count=${C:-none}"
  t 12 sysinfo-pswitch-printf -qn 'sysinfo:::pswitch { printf("fired\n"); exit(0); }'
  grep -q fired /tmp/out.12 && [ $RC = 0 ]; r $? ""
  # Is tick-1s armed before the other probes are enabled? (BEGIN fires after all attaches.)
  t 13 tick-vs-begin -qn 'sysinfo::: { n++; } BEGIN { t = timestamp; } tick-1s { printf("tick %d ms after BEGIN, %d sysinfo firings\n", (timestamp - t) / 1000000, n); exit(0); }'
  grep -q tick /tmp/out.13 && [ $RC = 0 ]; r $? "$(cat /tmp/out.13)"
  kill $L; wait $L 2>/dev/null
fi

echo "=== dmesg (bpf/warnings)"
dmesg | grep -iE 'bpf|warn|bug|oops' | tail -n 20
echo "=== DONE uptime=$(up)s"
poweroff -f
