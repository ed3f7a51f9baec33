//! The io provider: block I/O the tests cause themselves (dd with O_DIRECT,
//! buffered writes with fsync, sync), on the root disk and on an ext4 file
//! system on a loop device the tests set up, seen through bufinfo_t,
//! devinfo_t and fileinfo_t, and the seed's io scripts on that I/O.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::*;
use crate::util::Output;

/// A directory of the test's own on the root file system (a disk, unlike
/// a tmpfs /tmp may be), removed at the end.
struct RootDir(PathBuf);

impl RootDir {
    fn new(name: &str) -> RootDir {
        let dir = PathBuf::from(format!("/var/tmp/dtrace-io-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        RootDir(dir)
    }
}

impl Drop for RootDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An ext4 file system on a loop device, mounted; unmounted and detached
/// at the end, whatever happened.
struct LoopFs {
    image: PathBuf,
    device: String,
    mount: PathBuf,
}

impl LoopFs {
    fn new(name: &str) -> LoopFs {
        let image = PathBuf::from(format!("/var/tmp/dtrace-io-{}-{name}.img", std::process::id()));
        let mount = PathBuf::from(format!("/var/tmp/dtrace-io-{}-{name}.mnt", std::process::id()));
        std::fs::File::create(&image).and_then(|f| f.set_len(64 << 20)).expect("image");
        std::fs::create_dir_all(&mount).expect("mount point");
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&image).output().expect("losetup");
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let fs = LoopFs { image, device, mount };
        sh(&format!("mkfs.ext4 -q -F {} && mount {} {}", fs.device, fs.device, fs.mount.display()));
        fs
    }

    /// loop0 for /dev/loop0.
    fn statname(&self) -> &str {
        self.device.trim_start_matches("/dev/")
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
        let _ = std::fs::remove_dir(&self.mount);
        let _ = std::fs::remove_file(&self.image);
    }
}

fn sh(command: &str) {
    let status = Command::new("sh").args(["-c", command]).stderr(Stdio::null()).status().expect("sh");
    assert!(status.success(), "{command}");
}

/// dev_statname of the disk holding `path`, as /sys/dev/block names it.
fn statname_of(path: &Path) -> String {
    let dev = std::fs::metadata(path).expect("stat").dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).expect("sysfs link");
    link.file_name().expect("name").to_string_lossy().into_owned()
}

/// Starts one tracer per script, each printing "ready" once attached.
fn tracers(scripts: &[&str]) -> Vec<Tracer> {
    let mut all: Vec<Tracer> =
        scripts.iter().map(|s| Tracer::spawn(&["-q", "-n", r#"BEGIN { printf("ready\n"); }"#, "-n", s])).collect();
    for t in &mut all {
        t.wait_for("ready");
    }
    all
}

/// Stops a tracer started by `tracers`; its output without the "ready" line.
fn stop(t: &mut Tracer) -> Output {
    let mut out = t.stop();
    out.stdout = out.stdout.replacen("ready\n", "", 1);
    out
}

#[test]
fn direct_io_is_seen_with_its_bytes_direction_device_and_file() {
    let dir = RootDir::new("direct");
    let file = dir.0.join("direct.dat");
    let path = file.display().to_string();
    let script = format!(
        r#"io:::start /args[2]->fi_pathname == "{path}"/ {{
            @bytes[args[0]->b_flags & B_READ ? "R" : "W", args[1]->dev_statname, args[1]->dev_pathname,
                args[2]->fi_name, args[2]->fi_dirname, args[2]->fi_fs, args[2]->fi_mount] = sum(args[0]->b_bcount);
            @kind[args[0]->b_flags & B_PHYS ? "phys" : "other", args[0]->b_flags & B_ASYNC ? "async" : "sync"] = count();
            @first = min(args[2]->fi_offset);
            @oflags[args[0]->b_flags & B_READ ? "R" : "W", args[2]->fi_oflags & (O_DIRECT | O_ACCMODE)] = count();
            @dev[getmajor(args[0]->b_edev), getminor(args[0]->b_edev), args[1]->dev_major, args[1]->dev_minor] = count();
        }}
        END {{ printa("%s %s %s %s %s %s %s %@d\n", @bytes); printa("%s %s %@d\n", @kind); printa("first %@d\n", @first);
               printa("dev %d %d %d %d\n", @dev); printa("oflags %s %d\n", @oflags); }}"#
    );
    let mut t = tracers(&[&script]).remove(0);
    sh(&format!(
        "dd if=/dev/zero of={path} bs=1M count=1 oflag=direct && dd if={path} of=/dev/null bs=1M iflag=direct"
    ));
    let out = stop(&mut t);
    out.assert_no_panic();
    let statname = statname_of(&dir.0);
    let dirname = dir.0.display();
    // b_bcount is the request's size as the device sees it: another
    // request for the sectors next to the file's (metadata written by a
    // test running in parallel) may have been merged into one of them.
    for rw in ["W", "R"] {
        let prefix = format!("{rw} {statname} /dev/{statname} direct.dat {dirname} ext4 / ");
        let bytes: u64 = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("{prefix}\n{}", out.stdout))
            .parse()
            .unwrap();
        assert!((1 << 20..(1 << 20) + (64 << 10)).contains(&bytes), "{bytes}\n{}", out.stdout);
    }
    assert!(out.stdout.lines().any(|l| l.starts_with("phys sync ")), "{}", out.stdout);
    assert!(!out.stdout.contains("other"), "direct I/O is B_PHYS: {}", out.stdout);
    assert!(out.stdout.contains("first 0\n"), "{}", out.stdout);
    // The files dd opened: O_WRONLY | O_DIRECT to write, O_DIRECT to read.
    let (direct, wronly) = (libc::O_DIRECT, libc::O_WRONLY);
    assert!(out.stdout.contains(&format!("oflags W {}\n", direct | wronly)), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("oflags R {direct}\n")), "{}", out.stdout);
    let dev = std::fs::metadata(&dir.0).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    assert!(out.stdout.contains(&format!("dev {major} {minor} {major} {minor}\n")), "{}", out.stdout);
}

/// The I/O of one open file across a rename of the file, a rename of its
/// directory and its unlinking, then new files by the names of removed
/// ones (a freed dentry may come back at the same address): each request
/// names the file as it is named when the request starts, whatever paths
/// were built (and kept) for earlier requests.
const RENAMES: &str = r#"
import mmap, os, sys
d = sys.argv[1]
buf = mmap.mmap(-1, 65536)
block = memoryview(buf)[:4096]
os.mkdir(f"{d}/a")
fd = os.open(f"{d}/a/x.dat", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
os.pwritev(fd, [buf], 0)
os.preadv(fd, [block], 4096)
os.rename(f"{d}/a/x.dat", f"{d}/a/y.dat")
os.preadv(fd, [block], 8192)
os.rename(f"{d}/a", f"{d}/b")
os.preadv(fd, [block], 12288)
os.unlink(f"{d}/b/y.dat")
os.preadv(fd, [block], 16384)
os.close(fd)
for name in ("y.dat", "t1.dat", "t2.dat", "t1.dat"):
    fd = os.open(f"{d}/b/{name}", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
    os.pwritev(fd, [block], 0)
    os.preadv(fd, [block], 0)
    os.close(fd)
    if name != "y.dat":
        os.unlink(f"{d}/b/{name}")
"#;

#[test]
fn fi_pathname_follows_renames_and_unlinks() {
    let dir = RootDir::new("renames");
    let d = dir.0.display().to_string();
    let script = format!(
        r#"io:::start /strstr(args[2]->fi_pathname, "{d}/") != NULL/ {{
            printf("%s %s %d\n", args[0]->b_flags & B_READ ? "R" : "W", args[2]->fi_pathname, args[2]->fi_offset);
        }}"#
    );
    let mut t = tracers(&[&script]).remove(0);
    let status = Command::new("python3").args(["-c", RENAMES, &d]).status().expect("python3");
    assert!(status.success());
    let out = stop(&mut t);
    out.assert_no_panic();
    // Reads and writes, in the order they were issued.
    let expected = [
        "W a/x.dat 0",
        "R a/x.dat 4096",
        "R a/y.dat 8192",
        "R b/y.dat 12288",
        "R b/y.dat 16384",
        "W b/y.dat 0",
        "R b/y.dat 0",
        "W b/t1.dat 0",
        "R b/t1.dat 0",
        "W b/t2.dat 0",
        "R b/t2.dat 0",
        "W b/t1.dat 0",
        "R b/t1.dat 0",
    ];
    let lines: Vec<String> = out.stdout.lines().map(|l| l.replace(&format!("{d}/"), "")).collect();
    // A write of the first 64 KiB may be split into several requests;
    // every other line is one request.
    let mut rest = lines.iter().filter(|l| !l.is_empty() && !(l.starts_with("W a/x.dat ") && *l != "W a/x.dat 0"));
    for want in expected {
        assert_eq!(rest.next().map(String::as_str), Some(want), "{}", out.stdout);
    }
    assert_eq!(rest.next(), None, "{}", out.stdout);
}

/// The seed's scripts (chapter "Der Provider io"), as printed there.
const IOSNOOP: &str = r#"#pragma D option quiet
BEGIN
{
	printf("%10s %58s %2s\n", "DEVICE", "FILE", "RW");
}

io:::start
{
	printf("%10s %58s %2s\n", args[1]->dev_statname,
	    args[2]->fi_pathname, args[0]->b_flags & B_READ ? "R" : "W");
}
"#;

const IOTIME: &str = r#"#pragma D option quiet
BEGIN
{
	printf("%10s %58s %2s %7s\n", "DEVICE", "FILE", "RW", "MS");
}

io:::start
{
	start[args[0]->b_edev, args[0]->b_blkno] = timestamp;
}

io:::done
/start[args[0]->b_edev, args[0]->b_blkno]/
{
	this->elapsed = timestamp - start[args[0]->b_edev, args[0]->b_blkno];
	printf("%10s %58s %2s %3d.%03d\n", args[1]->dev_statname,
	    args[2]->fi_pathname, args[0]->b_flags & B_READ ? "R" : "W",
	    this->elapsed / 10000000, (this->elapsed / 1000) % 1000);
	start[args[0]->b_edev, args[0]->b_blkno] = 0;
}
"#;

const WHOIO: &str = r#"#pragma D option quiet
io:::start
{
	@[args[1]->dev_statname, execname, pid] = sum(args[0]->b_bcount);
}

END
{
	printf("%10s %20s %10s %15s\n", "DEVICE", "APP", "PID", "BYTES");
	printa("%10s %20s %10d %15@d\n", @);
}
"#;

const THROUGHPUT: &str = r#"#pragma D option quiet
io:::start
{
	start[args[0]->b_edev, args[0]->b_blkno] = timestamp;
}

io:::done
/start[args[0]->b_edev, args[0]->b_blkno]/
{
	this->elapsed = timestamp - start[args[0]->b_edev, args[0]->b_blkno];
	@[args[1]->dev_statname, args[1]->dev_pathname] =
	    quantize((args[0]->b_bcount * 976562) / this->elapsed);
	start[args[0]->b_edev, args[0]->b_blkno] = 0;
}

END
{
	printa("  %s (%s)\n%@d\n", @);
}
"#;

const WHOWRITE: &str = r#"#pragma D option quiet
io:::start
/args[0]->b_flags & B_WRITE/
{
	@[execname, args[2]->fi_dirname] = count();
}

END
{
	printf("%20s %51s %5s\n", "WHO", "WHERE", "COUNT");
	printa("%20s %51s %5@d\n", @);
}
"#;

/// The seed's time breakdown: on CPU against waiting for I/O, and the wait
/// by file, for dd instead of soffice.bin.
const IOWAIT: &str = r#"#pragma D option quiet
sched:::on-cpu
/execname == "dd"/
{
	self->on = vtimestamp;
}

sched:::off-cpu
/self->on/
{
	@time["<on cpu>"] = sum(vtimestamp - self->on);
	self->on = 0;
}

io:::wait-start
/execname == "dd"/
{
	self->wait = timestamp;
}

io:::wait-done
/self->wait/
{
	@io[args[2]->fi_name] = sum(timestamp - self->wait);
	@time["<I/O wait>"] = sum(timestamp - self->wait);
	self->wait = 0;
}

END
{
	printf("Time breakdown (milliseconds):\n");
	normalize(@time, 1000000);
	printa("  %-50s %15@d\n", @time);

	printf("\nI/O wait breakdown (milliseconds):\n");
	normalize(@io, 1000000);
	printa("  %-50s %15@d\n", @io);
}
"#;

/// fileio.d, from the slides (seed 001).
const FILEIO: &str = r#"#pragma D option quiet

io:::start {
    @bytes[args[1]->dev_statname, args[2]->fi_name,
        execname] = sum(args[0]->b_bcount);
}

END {
    printf("%10s %20s %15s %10s\n",
        "DEVICE", "FILE", "APP", "BYTES");
    printa("%10s %20s %15s %10@d\n", @bytes);
}
"#;

const APPLICAT: &str = r#"io:::start
/execname == "dd" && args[2]->fi_name == "applicat.rdb"/
{
	@ = lquantize(args[2]->fi_offset != -1 ?
	    args[2]->fi_offset / (1000 * 1024) : -1, 0, 1000);
}
"#;

#[test]
fn the_seed_scripts_print_their_columns_for_io_on_a_loop_device() {
    let fs = LoopFs::new("seed");
    let dev = fs.statname().to_string();
    let mount = fs.mount.display().to_string();
    let data = format!("{mount}/data.bin");
    let applicat = format!("{mount}/applicat.rdb");
    // Files to read back with O_DIRECT, written before tracing starts.
    sh(&format!("dd if=/dev/zero of={applicat} bs=1M count=3 conv=fsync"));
    let mut all = tracers(&[IOSNOOP, IOTIME, WHOIO, THROUGHPUT, WHOWRITE, IOWAIT, APPLICAT, FILEIO]);
    // Buffered writes made durable by fsync in dd's own context, then
    // direct reads of both files.
    sh(&format!(
        "dd if=/dev/zero of={data} bs=64k count=8 conv=fsync && dd if={data} of=/dev/null bs=64k iflag=direct && \
         dd if={applicat} of=/dev/null bs=1M iflag=direct"
    ));
    let outs: Vec<Output> = all.iter_mut().map(stop).collect();
    for out in &outs {
        out.assert_no_panic();
        assert_eq!(out.code(), 0, "{}", out.stderr);
    }
    let has_line = |out: &Output, line: &str| out.stdout.lines().any(|l| l == line);

    // iosnoop.d: DEVICE FILE RW.
    let iosnoop = &outs[0];
    assert!(
        iosnoop.stdout.starts_with(&format!("{:>10} {:>58} {:>2}\n", "DEVICE", "FILE", "RW")),
        "{}",
        iosnoop.stdout
    );
    for rw in ["W", "R"] {
        let line = format!("{dev:>10} {data:>58} {rw:>2}");
        assert!(has_line(iosnoop, &line), "{line}\n{}", iosnoop.stdout);
    }

    // iotime.d: the same with the milliseconds each request took.
    let iotime = &outs[1];
    let row = iotime
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{dev:>10} {data:>58}  R ")))
        .unwrap_or_else(|| panic!("{}", iotime.stdout));
    let ms = row.rsplit(' ').next().unwrap();
    assert!(ms.split_once('.').is_some_and(|(s, f)| s.parse::<u64>().is_ok() && f.len() == 3), "{row}");

    // whoio.d: DEVICE APP PID BYTES, dd's buffered writes and reads among them.
    let whoio = &outs[2];
    assert!(
        has_line(whoio, &format!("{:>10} {:>20} {:>10} {:>15}", "DEVICE", "APP", "PID", "BYTES")),
        "{}",
        whoio.stdout
    );
    let dd_bytes: u64 = whoio
        .stdout
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 4 && w[0] == dev && w[1] == "dd").then(|| w[3].parse::<u64>().unwrap())
        })
        .sum();
    assert!(dd_bytes >= (512 << 10) + (512 << 10) + (3 << 20), "{dd_bytes}\n{}", whoio.stdout);

    // The throughput quantize, one per device and device path.
    let throughput = &outs[3];
    let heading = format!("  {dev} (/dev/{dev})");
    let at = throughput.stdout.lines().position(|l| l == heading).unwrap_or_else(|| panic!("{}", throughput.stdout));
    assert!(throughput.stdout.lines().nth(at + 2).is_some_and(|l| l.contains("Distribution")), "{}", throughput.stdout);

    // whowrite.d: WHO WHERE COUNT, dd writing into the mount point.
    let whowrite = &outs[4];
    assert!(has_line(whowrite, &format!("{:>20} {:>51} {:>5}", "WHO", "WHERE", "COUNT")), "{}", whowrite.stdout);
    assert!(
        whowrite.stdout.lines().any(|l| l.starts_with(&format!("{:>20} {:>51} ", "dd", mount))),
        "{}",
        whowrite.stdout
    );

    // The time breakdown: dd ran and waited, for data.bin and applicat.rdb.
    let iowait = &outs[5];
    assert!(iowait.stdout.contains("Time breakdown (milliseconds):\n"), "{}", iowait.stdout);
    for row in ["<on cpu>", "<I/O wait>"] {
        assert!(iowait.stdout.lines().any(|l| l.starts_with(&format!("  {row:<50} "))), "{row}\n{}", iowait.stdout);
    }
    for name in ["data.bin", "applicat.rdb"] {
        assert!(iowait.stdout.lines().any(|l| l.starts_with(&format!("  {name:<50} "))), "{name}\n{}", iowait.stdout);
    }

    // applicat.d: the file read in three 1 MiB pieces, by the megabyte.
    let applicat = &outs[6];
    for mb in 0..3 {
        let row = applicat
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&mb.to_string()))
            .unwrap_or_else(|| panic!("{mb}\n{}", applicat.stdout));
        assert!(!row.ends_with(" 0"), "{row}\n{}", applicat.stdout);
    }

    // fileio.d: DEVICE FILE APP BYTES; dd read applicat.rdb's 3 MiB.
    let fileio = &outs[7];
    assert!(
        has_line(fileio, &format!("{:>10} {:>20} {:>15} {:>10}", "DEVICE", "FILE", "APP", "BYTES")),
        "{}",
        fileio.stdout
    );
    let line = format!("{dev:>10} {:>20} {:>15} {:>10}", "applicat.rdb", "dd", 3 << 20);
    assert!(has_line(fileio, &line), "{line}\n{}", fileio.stdout);
}

#[test]
fn writeback_by_the_kernel_names_the_file_in_the_flushers_context() {
    let dir = RootDir::new("writeback");
    let file = dir.0.join("written-back.dat");
    let path = file.display().to_string();
    // Dirty pages, not yet written.
    sh(&format!("dd if=/dev/urandom of={path} bs=64k count=4"));
    let script = format!(
        r#"io:::start /args[2]->fi_pathname == "{path}" && args[0]->b_flags & B_WRITE/ {{
            @[execname, args[0]->b_flags & B_ASYNC ? "async" : "sync"] = sum(args[0]->b_bcount);
        }}
        END {{ printa("%s %s %@d\n", @); }}"#
    );
    let mut t = tracers(&[&script]).remove(0);
    // sync(1) hands the writing to the flusher threads and waits for them.
    sh("sync");
    let out = stop(&mut t);
    let rows: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert!(!rows.is_empty(), "no writeback seen: {}", out.stdout);
    let total: u64 = rows.iter().map(|r| r.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(total, 256 << 10, "{}", out.stdout);
    assert!(rows.iter().all(|r| r.starts_with("kworker/")), "{}", out.stdout);
}

#[test]
fn io_probes_list_their_argument_types() {
    let out = run(&["-lv", "-n", "io:::start"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let types = "\t\targs[0]: bufinfo_t *\n\t\targs[1]: devinfo_t *\n\t\targs[2]: fileinfo_t *\n";
    assert!(out.stdout.contains(types), "{}", out.stdout);
    let listed = run(&["-l", "-P", "io"]);
    let names: Vec<&str> = listed.stdout.lines().skip(1).filter_map(|l| l.split_whitespace().last()).collect();
    assert_eq!(names, ["start", "done", "wait-start", "wait-done"]);
}

/// bufinfo_t alone (no args[2] in the script) still tells direct I/O
/// (B_PHYS) from page-cache I/O (B_PAGEIO).
#[test]
fn buffer_kinds_do_not_need_fileinfo() {
    let dir = RootDir::new("kinds");
    let path = dir.0.join("kinds.dat").display().to_string();
    let script = r#"io:::start /execname == "dd"/ {
            @[pid, args[0]->b_flags & B_PHYS ? "phys" : args[0]->b_flags & B_PAGEIO ? "pageio" : "other"] = count();
        }
        END { printa("%d %s %@d\n", @); }"#;
    let mut t = tracers(&[script]).remove(0);
    let dd = |args: &[&str]| {
        let mut child = Command::new("dd").args(args).stderr(Stdio::null()).spawn().expect("dd");
        assert!(child.wait().expect("dd").success());
        child.id()
    };
    // The buffered write first: it allocates the file's blocks (reading the
    // file system's bitmaps through the page cache, in dd's context), so
    // that the direct one, over the same blocks, moves only its own data.
    let buffered = dd(&[&format!("of={path}"), "if=/dev/zero", "bs=64k", "count=4", "conv=fsync"]);
    let direct = dd(&[&format!("of={path}"), "if=/dev/zero", "bs=64k", "count=4", "oflag=direct", "conv=notrunc"]);
    let out = stop(&mut t);
    let kinds = |pid: u32| -> Vec<String> {
        out.stdout
            .lines()
            .filter(|l| l.split(' ').next() == Some(pid.to_string().as_str()))
            .map(|l| l.split(' ').nth(1).unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(kinds(direct), ["phys"], "{}", out.stdout);
    assert!(kinds(buffered).contains(&"pageio".to_string()), "{}", out.stdout);
}

/// arg0 names the I/O at start and at done alike, as latency scripts key
/// `start[arg0] = timestamp` and look it up at done.
#[test]
fn start_and_done_name_one_request_by_arg0() {
    let dir = RootDir::new("latency");
    let file = dir.0.join("latency.dat");
    let path = file.display().to_string();
    let script = format!(
        r#"io:::start /args[2]->fi_pathname == "{path}"/ {{ start[arg0] = timestamp; @started = count(); }}
        io:::done /start[arg0]/ {{ @matched = count(); @positive = min(timestamp - start[arg0] > 0); start[arg0] = 0; }}
        END {{ printa("started %@d\n", @started); printa("matched %@d\n", @matched); printa("positive %@d\n", @positive); }}"#
    );
    let mut t = tracers(&[&script]).remove(0);
    sh(&format!("dd if=/dev/zero of={path} bs=64k count=8 oflag=direct"));
    let out = stop(&mut t);
    out.assert_no_panic();
    let count = |what: &str| -> u64 {
        let prefix = format!("{what} ");
        let line = out.stdout.lines().find_map(|l| l.strip_prefix(&prefix));
        line.unwrap_or_else(|| panic!("{what}: {}", out.stdout)).parse().unwrap()
    };
    assert!(count("started") >= 8, "{}", out.stdout);
    assert_eq!(count("started"), count("matched"), "{}", out.stdout);
    assert_eq!(count("positive"), 1, "{}", out.stdout);
}
