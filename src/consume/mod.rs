//! The consumer: drains the ring buffer on a timer (switchrate), decodes
//! each record with the layout the type checker computed for its clause, and
//! prints it exactly as DTrace does: the `CPU ID FUNCTION:NAME` prefix
//! unless quiet, trace() and printf() output, runtime errors and drops.
//! Speculative records wait, by their speculation's tag, for the record of
//! its commit() (then they are printed, in order) or discard().

pub(crate) mod aggfmt;
mod aggregate;
mod json;
mod ksyms;
pub(crate) mod metrics;
mod print;
mod print_pointee;
pub(crate) mod printf;
mod ring;
mod usyms;

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::defs::layout::{self, read_u32, read_u64};
use crate::flags::OutputFormat;
use crate::provider::Registry;
use crate::runtime::{Session, SpeculationTroubles};
use crate::sema::ir::{ActionLayout, Program, RecordKind, ValueLayout};

/// Set by SIGINT/SIGTERM.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

pub(crate) fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
}

pub(crate) struct ConsumeOptions {
    pub quiet: bool,
    /// bufpolicy=fill: the principal buffer's size (bufsize), per CPU.
    pub fill: Option<usize>,
    /// bufpolicy=ring: the principal buffer's size (bufsize), per CPU.
    pub ring: Option<usize>,
    pub switchrate: Duration,
    pub aggsort: crate::flags::AggSortOptions,
    pub aggdisplay: crate::flags::AggDisplayOptions,
    /// -F: indent entry/return records by call depth.
    pub flowindent: bool,
    pub format: OutputFormat,
    /// -O: with structured output, print the aggregations at exit too.
    pub print_aggregations_at_exit: bool,
    /// How often the metrics file is rewritten (aggrate).
    pub aggrate: Duration,
    /// How often drops are read and reported (statusrate).
    pub statusrate: Duration,
    /// Spaces before each stack frame (stackindent).
    pub stackindent: usize,
    /// trace() of a string shows its bytes, as of other data (rawbytes).
    pub rawbytes: bool,
    /// The most bytes of an object print() shows (printsize).
    pub printsize: usize,
    /// Records are printed in their firings' time order (temporal).
    pub temporal: bool,
    /// Drop reports name their kind (droptags).
    pub droptags: bool,
    /// The default output leaves out the CPU and ID columns, as
    /// dtrace-utils' test mode does (`_DTRACE_TESTING` set).
    pub testing: bool,
    /// The descriptor `out` writes to (ftruncate()).
    pub output_fd: std::os::fd::RawFd,
}

/// -F's state on one CPU: the depth, and the last record's clause, whose
/// probe decides whether another clause of the same entry indents again.
#[derive(Default, Clone, Copy)]
struct Flow {
    indent: usize,
    last: Option<(u32, u32)>,
}

struct State<'a> {
    program: &'a Program,
    registry: &'a Registry,
    /// Where probes made after tracing began are (processes found later).
    session: &'a Session,
    quiet: bool,
    /// -F: the flow of each CPU, when indenting.
    flows: Option<HashMap<u32, Flow>>,
    out: Output<'a>,
    /// exit(N) seen: the status to exit with.
    exit_status: Option<i32>,
    /// bufpolicy=fill: what each CPU's buffer holds.
    fill: Option<Fill>,
    /// bufpolicy=ring: the records each CPU's buffer still holds.
    ring: Option<RingPolicy>,
    /// temporal: records held until no earlier one can still arrive.
    temporal: Option<TemporalOrder>,
    /// Set once END fires: its records are wanted even after exit().
    ending: bool,
    /// DTrace prints the column heading before the first record, not at start.
    heading_printed: bool,
    aggs: aggregate::Aggregations<'a>,
    /// The records of each speculation not yet committed or discarded, in
    /// order, by the speculation's tag.
    speculations: HashMap<u32, Vec<Vec<u8>>>,
    format: OutputFormat,
    /// -x metricsfile: rewritten at printa(), at aggrate and at exit.
    metrics: Option<metrics::MetricsFile>,
    /// The options setopt() can change while tracing.
    switchrate: Duration,
    aggrate: Duration,
    rawbytes: bool,
    /// The most bytes of an object print() shows (printsize).
    printsize: usize,
    droptags: bool,
    testing: bool,
    /// The line being rendered, kept between records for its capacity.
    line: Vec<u8>,
}

/// The output stream. A failed write is kept, not returned: the loop
/// checks `failure` after each drain and ends the session (every writer in
/// the consumer can then ignore results without losing an error).
struct Output<'a> {
    inner: Box<dyn Write + 'a>,
    /// The descriptor under `inner`, for ftruncate().
    inner_fd: Option<std::os::fd::RawFd>,
    /// freopen()'s file, written instead of `inner` while open.
    reopened: Option<std::fs::File>,
    failure: Option<std::io::Error>,
    /// A record's output kept instead of written (bufpolicy=ring).
    capture: Option<Vec<u8>>,
}

impl Output<'_> {
    fn current(&mut self) -> &mut dyn Write {
        match &mut self.reopened {
            Some(file) => file,
            None => &mut self.inner,
        }
    }

    /// freopen(path): append to `path` from now on; "" goes back to the
    /// original output.
    fn reopen(&mut self, path: &str) -> std::io::Result<()> {
        self.flush()?;
        self.reopened = None;
        if !path.is_empty() {
            self.reopened = Some(std::fs::OpenOptions::new().append(true).create(true).open(path)?);
        }
        Ok(())
    }

    /// ftruncate(): empty the output when it is a file (a terminal or a
    /// pipe is left alone, as DTrace's ftruncate(3C) fails there).
    fn truncate(&mut self) {
        use std::os::fd::AsRawFd;
        self.flush().ok();
        let fd = match &self.reopened {
            Some(file) => Some(file.as_raw_fd()),
            None => self.inner_fd,
        };
        if let Some(fd) = fd {
            // SAFETY: fd is our output's open descriptor; both calls only
            // change the file's length and offset.
            unsafe {
                if libc::ftruncate(fd, 0) == 0 {
                    libc::lseek(fd, 0, libc::SEEK_SET);
                }
            }
        }
    }
}

impl Write for Output<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(kept) = &mut self.capture {
            kept.extend_from_slice(buf);
            return Ok(buf.len());
        }
        if self.failure.is_some() {
            return Ok(buf.len());
        }
        match self.current().write_all(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.failure = Some(e);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.failure.is_none() {
            if let Err(e) = self.current().flush() {
                self.failure = Some(e);
            }
        }
        Ok(())
    }
}

/// How the session ends when its output cannot be written; `run` returns
/// it as its error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputFailure {
    /// The reader went away (EPIPE): dtrace ends as SIGPIPE ends DTrace,
    /// quietly, after detaching.
    #[error("output closed")]
    ReaderGone,
    /// Anything else (a full disk, an I/O error): DTrace's "processing aborted".
    #[error("processing aborted: {}", crate::compile::io_reason(.0))]
    Error(std::io::Error),
}

/// What one record's actions produce: DTrace's text, or the elements of
/// the record's "output" list in structured output.
enum Rendered {
    Text(Vec<u8>),
    Json(Vec<serde_json::Value>),
}

/// A drop of some kind, reported as dtrace reports it (text on stderr, a
/// DROP record in structured output).
struct DropReport {
    kind: json::DropKind,
    cpu: Option<u32>,
    count: u64,
    total: u64,
    message: String,
}

/// Runs the session until exit(), a signal, or nothing left to trace; then
/// fires END and drains the last records. Returns dtrace's exit status.
pub(crate) fn run(
    session: &Session,
    program: &Program,
    generated: &crate::codegen::Generated,
    registry: &Registry,
    opts: &ConsumeOptions,
    out: Box<dyn Write + '_>,
    metrics: Option<metrics::MetricsFile>,
    targets: &mut crate::target::Targets,
) -> Result<i32> {
    let state = RefCell::new(State {
        program,
        registry,
        session,
        quiet: opts.quiet,
        flows: opts.flowindent.then(HashMap::new),
        out: Output { inner: out, inner_fd: Some(opts.output_fd), reopened: None, failure: None, capture: None },
        exit_status: None,
        fill: opts.fill.map(|bufsize| Fill::new(bufsize, program, registry)),
        ring: opts.ring.map(RingPolicy::new),
        temporal: opts.temporal.then(TemporalOrder::default),
        heading_printed: false,
        ending: false,
        aggs: aggregate::Aggregations::new(
            program,
            session,
            opts.aggsort.clone(),
            usyms::UserSymbols::new(registry.processes.known_files()),
        ),
        speculations: HashMap::new(),
        format: opts.format,
        metrics,
        switchrate: opts.switchrate,
        aggrate: opts.aggrate,
        rawbytes: opts.rawbytes,
        printsize: opts.printsize,
        droptags: opts.droptags,
        testing: opts.testing,
        line: Vec::new(),
    });
    state.borrow_mut().aggs.symbols.stack_indent = opts.stackindent;
    state.borrow_mut().aggs.display = opts.aggdisplay;
    state.borrow_mut().aggs.symbols.know_targets(&targets.pids(), targets.last_pid());
    let ring = ring::EventRing::new(session.events_map())?;
    let mut pace = ring::Pace::new(ring.size());
    let mut drops_seen: Vec<u64> = Vec::new();
    let mut agg_drops_seen: Vec<u64> = Vec::new();
    let mut speculation_troubles_seen = SpeculationTroubles::default();
    let mut dynamic_drops_seen = 0;
    let mut double_errors_seen = 0;
    let mut report_drops = |session: &Session, state: &mut State| {
        let mut reports = new_drops(&session.drops(), &mut drops_seen, json::DropKind::Principal);
        reports.extend(new_drops(&session.aggregation_drops(), &mut agg_drops_seen, json::DropKind::Aggregation));
        let dynamic = session.dynamic_variable_drops();
        reports.extend(status_drop(dynamic, dynamic_drops_seen, json::DropKind::Dynamic, "dynamic variable drop", ""));
        dynamic_drops_seen = dynamic;
        let double = session.double_errors();
        reports.extend(status_drop(
            double,
            double_errors_seen,
            json::DropKind::DoubleError,
            "error",
            " in ERROR probe enabling",
        ));
        double_errors_seen = double;
        reports.extend(speculation_troubles(session.speculation_troubles(), &mut speculation_troubles_seen));
        for report in reports {
            state.report_drop(&report);
        }
    };

    session.fire_begin()?;
    session.start_timers()?;
    targets.release();
    let mut last_status = std::time::Instant::now();
    let mut last_metrics = std::time::Instant::now();
    state.borrow_mut().write_metrics();
    loop {
        // Like dtrace(1), answer an interrupt with a newline (even when quiet),
        // which ends the terminal's "^C" line. Read once: a signal arriving
        // later in this pass is answered by the next.
        let interrupted = INTERRUPTED.load(Ordering::SeqCst);
        // Checked before draining, so the targets' last records are printed,
        // then reported after them.
        let exit_notices = targets.check_exits();
        if interrupted && opts.format == OutputFormat::Text {
            state.borrow_mut().out.write_all(b"\n").ok();
        }
        let switchrate = state.borrow().switchrate;
        let drain = drain_for_a_while(&ring, &mut state.borrow_mut(), switchrate);
        state.borrow_mut().release_in_time_order(false);
        state.borrow_mut().out.flush().ok();
        // Processes that started since: their probes retained descriptions
        // (provider globs) match.
        for warning in session.enable_started_processes(program, generated) {
            stderr_line!("dtrace: {warning}");
        }
        // dtrace.c's notice() is silent under -q or the quiet pragma.
        if !opts.quiet {
            for notice in exit_notices {
                stderr_line!("dtrace: {notice}");
            }
        }
        // Drop counters are read at DTrace's statusrate, not at every drain.
        if last_status.elapsed() >= opts.statusrate {
            report_drops(session, &mut state.borrow_mut());
            last_status = std::time::Instant::now();
        }
        if last_metrics.elapsed() >= state.borrow().aggrate {
            state.borrow_mut().write_metrics();
            last_metrics = std::time::Instant::now();
        }
        if let Some(failure) = state.borrow_mut().out.failure.take() {
            return Err(output_failure(failure).into());
        }
        if state.borrow().exit_status.is_some() || interrupted || targets.all_exited() {
            break;
        }
        // A ring still full is read again at once.
        if let Drain::Emptied { bytes } = drain {
            let switchrate = state.borrow().switchrate;
            std::thread::sleep(pace.next_sleep(bytes, switchrate));
        }
    }
    // What the probes left in the ring goes before END fires: a ring that a
    // storm of records filled would drop END's.
    session.stop_probes()?;
    ring.drain(|record| state.borrow_mut().record(record));
    state.borrow_mut().ending = true;
    session.fire_end()?;
    ring.drain(|record| state.borrow_mut().record(record));
    state.borrow_mut().release_in_time_order(true);
    report_drops(session, &mut state.borrow_mut());
    let mut st = state.borrow_mut();
    st.print_ring();
    match opts.format {
        OutputFormat::Text => {
            // dtrace(1) ends with a newline, even when quiet, then the aggregations.
            let mut text = vec![b'\n'];
            let st = &mut *st;
            st.aggs.print_unprinted(&mut text, &mut st.out);
            st.out.write_all(&text).ok();
        }
        // Structured output prints them only when asked (-O), as FreeBSD's.
        OutputFormat::Json if opts.print_aggregations_at_exit => {
            for aggregation in st.aggs.json_unprinted() {
                st.write_json_line(&aggregation);
            }
        }
        OutputFormat::Json => {}
    }
    st.out.flush().ok();
    st.write_metrics();
    if let Some(failure) = st.out.failure.take() {
        return Err(output_failure(failure).into());
    }
    Ok(st.exit_status.unwrap_or(0))
}

/// Records consumed between checks of the clock and of an interrupt.
const DRAIN_BATCH: usize = 1024;

enum Drain {
    /// Less than `RELEASE_EVERY` is left; this many bytes were read.
    Emptied { bytes: u64 },
    /// Time ran out or an interrupt came with records still to read.
    Stopped,
}

/// Reads the ring, snapshot after snapshot while each finds at least
/// `RELEASE_EVERY` bytes (a busy producer is followed at that distance,
/// never line by line), but returns once an interrupt arrives or a
/// switchrate's time has passed: a storm of records (an error in every
/// system call, each error's write making another) refills the ring as fast
/// as it is read, and a drain until empty would never let the loop see
/// Ctrl-C, drops or exit() (dtrace(1) reads one snapshot per pass).
fn drain_for_a_while(ring: &ring::EventRing, state: &mut State, switchrate: Duration) -> Drain {
    let started = std::time::Instant::now();
    let budget = switchrate.max(Duration::from_millis(10));
    let mut consumed = 0usize;
    let mut bytes = 0;
    loop {
        let pass = ring.pass(|record| {
            state.record(record);
            consumed += 1;
            consumed % DRAIN_BATCH != 0 || !(INTERRUPTED.load(Ordering::SeqCst) || started.elapsed() >= budget)
        });
        match pass {
            ring::Pass::Stopped => return Drain::Stopped,
            ring::Pass::Drained(read) if read < ring::RELEASE_EVERY => return Drain::Emptied { bytes: bytes + read },
            ring::Pass::Drained(read) => bytes += read,
        }
    }
}

fn output_failure(error: std::io::Error) -> OutputFailure {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        OutputFailure::ReaderGone
    } else {
        OutputFailure::Error(error)
    }
}

/// `N drops on CPU C` for what was lost on each CPU since the last report.
fn new_drops(now: &[u64], seen: &mut Vec<u64>, kind: json::DropKind) -> Vec<DropReport> {
    let what = if kind == json::DropKind::Aggregation { "aggregation drop" } else { "drop" };
    let mut reports = Vec::new();
    for (cpu, &n) in now.iter().enumerate() {
        let before = seen.get(cpu).copied().unwrap_or(0);
        if n > before {
            let count = n - before;
            let message = format!("{count} {what}{} on CPU {cpu}", if count == 1 { "" } else { "s" });
            reports.push(DropReport { kind, cpu: Some(cpu as u32), count, total: n, message });
        }
    }
    *seen = now.to_vec();
    reports
}

/// Speculative drops and failed speculations since the last report, in
/// DTrace's words (dt_handle_status).
fn speculation_troubles(now: SpeculationTroubles, seen: &mut SpeculationTroubles) -> Vec<DropReport> {
    use json::DropKind::*;
    let kinds = [
        (now.drops, seen.drops, Speculation, "speculative drop", ""),
        (now.busy, seen.busy, SpeculationBusy, "failed speculation", " (available buffer(s) still busy)"),
        (
            now.unavailable,
            seen.unavailable,
            SpeculationUnavailable,
            "failed speculation",
            " (no speculative buffer available)",
        ),
    ];
    let reports =
        kinds.into_iter().filter_map(|(total, before, kind, what, why)| status_drop(total, before, kind, what, why));
    let reports = reports.collect();
    *seen = now;
    reports
}

/// One line of DTrace's status table (dt_drop.c): `N <what>[s]<why>` for
/// what was lost since `before`, over all CPUs.
fn status_drop(total: u64, before: u64, kind: json::DropKind, what: &str, why: &str) -> Option<DropReport> {
    let count = total.saturating_sub(before);
    let message = format!("{count} {what}{}{why}", if count == 1 { "" } else { "s" });
    (count > 0).then_some(DropReport { kind, cpu: None, count, total, message })
}

/// The fill buffer policy, as DTrace's: each CPU's records, sized as
/// DTrace sizes them, fill its buffer (less the room END's records need);
/// the first that does not fit marks it full, and tracing stops as on
/// exit(0): END fires and dtrace exits. Nothing more of that CPU is kept.
struct Fill {
    /// Bytes each CPU's records may take before END's.
    room: usize,
    used: HashMap<u32, usize>,
    full: std::collections::HashSet<u32>,
}

impl Fill {
    fn new(bufsize: usize, program: &Program, registry: &Registry) -> Fill {
        let reserve = program.end_reserve(registry.id_of("dtrace", "END"));
        Fill { room: bufsize.saturating_sub(reserve), used: HashMap::new(), full: Default::default() }
    }

    /// Whether a record of `size` bytes from `cpu` is kept; false marks
    /// the CPU's buffer full.
    fn keeps(&mut self, cpu: u32, size: usize) -> bool {
        if self.full.contains(&cpu) {
            return false;
        }
        let used = self.used.entry(cpu).or_default();
        if *used + size > self.room {
            self.full.insert(cpu);
            return false;
        }
        *used += size;
        true
    }
}

/// The temporal option's order. Every CPU's records go through one ring
/// buffer in the order they were reserved, and a firing samples its
/// timestamp before it reserves: a record reserved after another may carry
/// an earlier timestamp, but never by more than the moments between the
/// two in one program. Records are held, sorted by timestamp (then
/// arrival), until they are older than `HOLD`.
#[derive(Default)]
struct TemporalOrder {
    held: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, Vec<u8>)>>,
    arrived: u64,
}

impl TemporalOrder {
    /// Far longer than one program runs, preempted or not.
    const HOLD: Duration = Duration::from_millis(50);

    fn hold(&mut self, data: &[u8]) {
        let timestamp = u64::from_ne_bytes(data[layout::HDR_TIMESTAMP..][..8].try_into().expect("8 bytes"));
        self.arrived += 1;
        self.held.push(std::cmp::Reverse((timestamp, self.arrived, data.to_vec())));
    }

    fn release(&mut self, all: bool) -> Vec<Vec<u8>> {
        // The clock bpf_ktime_get_ns() reads.
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let now = now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64;
        let horizon = now.saturating_sub(Self::HOLD.as_nanos() as u64);
        let mut ready = Vec::new();
        while let Some(std::cmp::Reverse((timestamp, ..))) = self.held.peek() {
            if !all && *timestamp > horizon {
                break;
            }
            let std::cmp::Reverse((_, _, data)) = self.held.pop().expect("peeked");
            ready.push(data);
        }
        ready
    }
}

/// The ring buffer policy, as DTrace's: each CPU's buffer keeps its most
/// recent records, sized as DTrace sizes them, up to bufsize, and they are
/// printed when tracing ends. Each record is rendered when it arrives
/// (exit() and the like act then) and its output kept.
struct RingPolicy {
    bufsize: usize,
    /// (CPU, DTrace's size, output) in arrival order.
    kept: std::collections::VecDeque<(u32, usize, Vec<u8>)>,
    used: HashMap<u32, usize>,
    /// The column heading, printed before what is kept.
    heading: Vec<u8>,
}

impl RingPolicy {
    fn new(bufsize: usize) -> RingPolicy {
        RingPolicy { bufsize, kept: Default::default(), used: HashMap::new(), heading: Vec::new() }
    }

    /// Keeps a record's output, dropping its CPU's oldest until they fit.
    fn keep(&mut self, cpu: u32, size: usize, output: Vec<u8>) {
        if size > self.bufsize {
            return;
        }
        let used = self.used.entry(cpu).or_default();
        *used += size;
        while *used > self.bufsize {
            let Some(oldest) = self.kept.iter().position(|(c, ..)| *c == cpu) else { break };
            let (_, size, _) = self.kept.remove(oldest).expect("found");
            *used -= size;
        }
        self.kept.push_back((cpu, size, output));
    }
}

impl State<'_> {
    /// The probe with ID `id`: the registry's, or one made in a process
    /// found after tracing began.
    fn probe<T>(&self, id: u32, f: impl FnOnce(&crate::provider::Probe) -> T) -> Option<T> {
        match self.registry.get(id) {
            Some(p) => Some(f(p)),
            None => self.session.late_probe(id).map(|p| f(&p)),
        }
    }

    /// A record to print: at once, or kept by the ring policy.
    fn emit_record(&mut self, data: &[u8]) {
        if self.ring.is_none() {
            return self.print_record(data);
        }
        let epid = read_u32(data, layout::HDR_EPID);
        let Some(clause) = self.program.clauses.get((epid as usize).wrapping_sub(1)) else { return };
        let size = clause.dtrace_record_size(self.program.max_strlen);
        let headed = self.heading_printed;
        self.out.capture = Some(Vec::new());
        self.print_record(data);
        let mut output = self.out.capture.take().unwrap_or_default();
        if let Some(ring) = &mut self.ring {
            // The heading the first record printed stays, whatever is dropped.
            if !headed && self.heading_printed {
                let end = output.iter().position(|&b| b == b'\n').map_or(output.len(), |i| i + 1);
                ring.heading = output.drain(..end).collect();
            }
            ring.keep(read_u32(data, layout::HDR_CPU), size, output);
        }
    }

    /// Prints what the ring policy kept (when tracing has ended).
    fn print_ring(&mut self) {
        if let Some(ring) = self.ring.take() {
            self.out.write_all(&ring.heading).ok();
            for (_, _, output) in ring.kept {
                self.out.write_all(&output).ok();
            }
        }
    }

    fn record(&mut self, data: &[u8]) {
        if data.len() < layout::HDR_SIZE {
            return;
        }
        match &mut self.temporal {
            Some(order) => order.hold(data),
            None => self.take_record(data),
        }
    }

    /// temporal: takes the records held that no record still to arrive can
    /// precede (all of them once tracing has ended), earliest first.
    fn release_in_time_order(&mut self, all: bool) {
        let Some(order) = &mut self.temporal else { return };
        for data in order.release(all) {
            self.take_record(&data);
        }
    }

    fn take_record(&mut self, data: &[u8]) {
        let spec = read_u32(data, layout::HDR_SPEC);
        match read_u32(data, layout::HDR_EPID) {
            layout::EPID_FAULT => self.fault(&data[layout::HDR_SIZE..], read_u32(data, layout::HDR_PROBE_ID)),
            layout::EPID_COMMIT => {
                for record in self.speculations.remove(&spec).unwrap_or_default() {
                    self.emit_record(&record);
                }
            }
            layout::EPID_DISCARD => {
                self.speculations.remove(&spec);
            }
            _ if spec != 0 => self.speculations.entry(spec).or_default().push(data.to_vec()),
            _ => self.emit_record(data),
        }
    }

    /// Prints a clause's record: the probe columns unless quiet, then its actions.
    fn print_record(&mut self, data: &[u8]) {
        let epid = read_u32(data, layout::HDR_EPID);
        let probe_id = read_u32(data, layout::HDR_PROBE_ID);
        let cpu = read_u32(data, layout::HDR_CPU);
        // Records after exit() belong to a run that is over.
        if self.exit_status.is_some() && !self.ending {
            return;
        }
        let Some(clause) = self.program.clauses.get(epid as usize - 1) else { return };
        if let (Some(fill), false) = (self.fill.as_mut(), self.ending) {
            if !fill.keeps(cpu, clause.dtrace_record_size(self.program.max_strlen)) {
                // A full buffer stops tracing (DTrace's "filled" status).
                self.exit_status.get_or_insert(0);
                return;
            }
        }
        self.aggs.begin_record();
        // One buffer for every record's line: no allocation per event.
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        if self.format == OutputFormat::Json {
            // The record's fields say which probe fired: no columns.
        } else if self.flows.is_some() {
            // dtrace(1) prints the flow columns even when quiet.
            if !self.heading_printed {
                line.extend(format!("{:>3} {:<41}\n", "CPU", "FUNCTION").as_bytes());
                self.heading_printed = true;
            }
            let mut flows = self.flows.take();
            let flow = flows.as_mut().map(|f| f.entry(cpu).or_default());
            let name = flow.and_then(|flow| self.probe(probe_id, |p| flow_column(flow, p, epid))).unwrap_or_default();
            self.flows = flows;
            line.extend(format!("{cpu:>3} {name:<41} ").as_bytes());
        } else if !self.quiet {
            // dtrace-utils' test mode has no CPU and ID columns.
            if !self.heading_printed {
                if !self.testing {
                    line.extend(format!("{:>3} {:>6} ", "CPU", "ID").as_bytes());
                }
                line.extend(format!("{:>32}\n", "FUNCTION:NAME").as_bytes());
                self.heading_printed = true;
            }
            if !self.testing {
                line.extend(format!("{cpu:>3} {probe_id:>6} ").as_bytes());
            }
            let name = self.probe(probe_id, |p| format!("{}:{}", p.function, p.name)).unwrap_or_default();
            line.extend(format!("{name:>32} ").as_bytes());
        }
        let mut rendered = match self.format {
            OutputFormat::Text => Rendered::Text(line),
            OutputFormat::Json => Rendered::Json(Vec::new()),
        };
        for (i, action) in clause.actions.iter().enumerate() {
            let (word, bit) = clause.present_bit(i);
            if read_u64(data, word) & (1u64 << bit) == 0 {
                continue;
            }
            self.action(action, data, &mut rendered);
        }
        match rendered {
            Rendered::Text(mut line) => {
                if !self.quiet {
                    line.push(b'\n');
                }
                self.out.write_all(&line).ok();
                self.line = line;
            }
            // A clause that only aggregates or exits leaves no record (as FreeBSD's).
            Rendered::Json(output) if output.is_empty() => {}
            Rendered::Json(output) => {
                let timestamp = read_u64(data, layout::HDR_TIMESTAMP);
                let record = match self.registry.get(probe_id) {
                    Some(p) => json::probe_record(timestamp, cpu, probe_id, Some(p), output),
                    None => {
                        json::probe_record(timestamp, cpu, probe_id, self.session.late_probe(probe_id).as_ref(), output)
                    }
                };
                self.write_json_line(&record);
            }
        }
    }

    /// One record: a line of JSON in the output.
    fn write_json_line(&mut self, record: &serde_json::Value) {
        let mut text = record.to_string().into_bytes();
        text.push(b'\n');
        self.out.write_all(&text).ok();
    }

    fn report_drop(&mut self, report: &DropReport) {
        match self.format {
            OutputFormat::Text if self.droptags => stderr_line!("dtrace: [{}] {}", report.kind.tag(), report.message),
            OutputFormat::Text => stderr_line!("dtrace: {}", report.message),
            OutputFormat::Json => {
                let record = json::drop(report.kind, report.cpu, report.count, report.total, &report.message);
                self.write_json_line(&record);
                self.out.flush().ok();
            }
        }
    }

    /// Rewrites the metrics file, if there is one, with every aggregation.
    fn write_metrics(&mut self) {
        if let Some(metrics) = &mut self.metrics {
            metrics.write(&self.aggs.metrics_rows());
        }
    }

    fn action(&mut self, action: &ActionLayout, data: &[u8], rendered: &mut Rendered) {
        let strsize = self.program.strsize;
        // trace(func(...)) and its kin print the symbol, quiet or not, as
        // DTrace's dt_print_sym does: "  %-50s".
        if let (RecordKind::Trace, [ValueLayout::Symbol(kind)]) = (&action.kind, action.values.as_slice()) {
            let record = data.get(action.offset..).unwrap_or_default();
            let text = self.aggs.symbols.symbol_text(*kind, record);
            match rendered {
                Rendered::Text(line) => line.extend(format!("  {text:<50}").as_bytes()),
                Rendered::Json(items) => items.push(serde_json::json!({ "value": text })),
            }
            return;
        }
        let mut offset = action.offset;
        let mut values: smallvec::SmallVec<[printf::Value; 8]> = smallvec::SmallVec::new();
        for v in &action.values {
            let end = (offset + v.bytes(strsize)).min(data.len());
            let bytes = &data[offset.min(end)..end];
            values.push(match v {
                ValueLayout::Int { size, signed } => {
                    printf::Value::Int { bits: read_u64(bytes, 0), size: *size, signed: *signed }
                }
                ValueLayout::Float { size } => printf::Value::Float { bits: read_u64(bytes, 0), size: *size },
                // The stack ID: %k renders it through FormatContext::stack.
                ValueLayout::Stack => printf::Value::Str(bytes),
                // printf sees the address (%a, %p).
                ValueLayout::Symbol(kind) => {
                    printf::Value::Int { bits: read_u64(bytes, kind.recorded_bytes() - 8), size: 8, signed: false }
                }
                ValueLayout::Str => {
                    printf::Value::Str(&bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())])
                }
                ValueLayout::Memory(size) => printf::Value::Str(&bytes[..(*size).min(bytes.len())]),
                ValueLayout::Pointee(size) => printf::Value::Str(&bytes[..(8 + *size).min(bytes.len())]),
            });
            offset = end;
        }
        match &action.kind {
            RecordKind::Exit => {
                if let printf::Value::Int { bits, .. } = values[0] {
                    self.exit_status = Some(bits as i32);
                }
            }
            RecordKind::Trunc(agg) => {
                let keep = values.first().and_then(|v| match v {
                    printf::Value::Int { bits, .. } => Some(*bits as i64),
                    _ => None,
                });
                self.aggs.trunc(*agg, keep);
            }
            RecordKind::Clear(agg) => self.aggs.clear(*agg),
            RecordKind::Normalize(agg) => {
                if let Some(printf::Value::Int { bits, .. }) = values.first() {
                    self.aggs.normalize(*agg, *bits);
                }
            }
            RecordKind::Denormalize(agg) => self.aggs.denormalize(*agg),
            RecordKind::Setopt { name, value } => {
                // A value computed in the probe is the record's string.
                let recorded = match values.first() {
                    Some(printf::Value::Str(bytes)) => Some(String::from_utf8_lossy(bytes).into_owned()),
                    _ => None,
                };
                self.setopt(name, value.as_deref().or(recorded.as_deref()), data)
            }
            RecordKind::System(format) => {
                let mut command = Vec::new();
                printf::format(&self.program.formats[*format], &values, &self.aggs.symbols, &mut command);
                self.system(&command, rendered);
            }
            RecordKind::Freopen(format) => {
                let mut path = Vec::new();
                printf::format(&self.program.formats[*format], &values, &self.aggs.symbols, &mut path);
                self.flush_line(rendered);
                let path = String::from_utf8_lossy(&path).into_owned();
                if let Err(e) = self.out.reopen(&path) {
                    stderr_line!("dtrace: failed to freopen {path}: {e}");
                }
            }
            RecordKind::Ftruncate => {
                self.flush_line(rendered);
                self.out.truncate();
            }
            _ => match rendered {
                Rendered::Text(line) => self.text_action(&action.kind, &action.values, &values, line),
                Rendered::Json(items) => self.json_action(&action.kind, &values, items),
            },
        }
        if let RecordKind::Printa { .. } = action.kind {
            self.write_metrics();
        }
    }

    /// An action's text, as DTrace prints it.
    fn text_action(
        &mut self,
        kind: &RecordKind,
        layouts: &[ValueLayout],
        values: &[printf::Value],
        line: &mut Vec<u8>,
    ) {
        match kind {
            // A struct or an array traced whole prints as DTrace prints raw
            // bytes (dt_print_bytes: as a string when they look like one);
            // with rawbytes, so does a string.
            RecordKind::Trace => match (&layouts[0], &values[0]) {
                (ValueLayout::Memory(_), printf::Value::Str(bytes)) => match aggfmt::as_string(bytes) {
                    // Printable without a NUL: padded even when quiet.
                    Some(text) if !self.rawbytes => {
                        let quiet = self.quiet && text.len() < bytes.len();
                        trace_value(&printf::Value::Str(text), quiet, line)
                    }
                    _ => hex_dump(bytes, line),
                },
                (ValueLayout::Str, printf::Value::Str(bytes)) if self.rawbytes => hex_dump(bytes, line),
                _ => trace_value(&values[0], self.quiet, line),
            },
            RecordKind::Print(node) => print_text(node, &values[0], line),
            RecordKind::PrintPointee(node) => {
                if let printf::Value::Str(record) = values[0] {
                    print_pointee::print_pointee(node, record, self.printsize, line)
                }
            }
            RecordKind::Printf(format) => {
                printf::format(&self.program.formats[*format], values, &self.aggs.symbols, line)
            }
            RecordKind::Tracemem { .. } => hex_dump(tracemem_bytes(values), line),
            RecordKind::Stack => {
                if let printf::Value::Str(record) = values[0] {
                    self.aggs.symbols.write_stack(read_u64(record, 0), line);
                }
            }
            RecordKind::Printa { format, aggs } => match format {
                Some(f) => self.aggs.print_formatted(&self.program.formats[*f], aggs, line),
                None => self.aggs.print_default(aggs, line),
            },
            _ => {}
        }
    }

    /// An action's elements of a record's "output" in structured output.
    fn json_action(&mut self, kind: &RecordKind, values: &[printf::Value], items: &mut Vec<serde_json::Value>) {
        match kind {
            RecordKind::Trace => items.push(serde_json::json!({ "value": json::value(&values[0]) })),
            // FreeBSD lists print()'s members; here is the text print() writes.
            RecordKind::Print(node) => {
                let mut text = Vec::new();
                print_text(node, &values[0], &mut text);
                items.push(serde_json::json!({ "value": String::from_utf8_lossy(&text) }));
            }
            RecordKind::PrintPointee(node) => {
                let mut text = Vec::new();
                if let printf::Value::Str(record) = values[0] {
                    print_pointee::print_pointee(node, record, self.printsize, &mut text);
                }
                items.push(serde_json::json!({ "value": String::from_utf8_lossy(&text) }));
            }
            RecordKind::Printf(format) => {
                let mut message = Vec::new();
                printf::format(&self.program.formats[*format], values, &self.aggs.symbols, &mut message);
                items.extend(json::printf(&message, values));
            }
            RecordKind::Tracemem { .. } => {
                items.push(serde_json::json!({ "tracemem": json::bytes_value(tracemem_bytes(values)) }))
            }
            RecordKind::Stack => {
                if let printf::Value::Str(record) = values[0] {
                    let id = read_u64(record, 0);
                    let user = crate::sema::ir::ustack_value::decode(id).is_some();
                    items.push(json::stack(user, &self.aggs.symbols.stack_frames(id)));
                }
            }
            // A formatted printa() gives the same data as a plain one (as FreeBSD's).
            RecordKind::Printa { aggs, .. } => items.push(self.aggs.json_printa(aggs)),
            _ => {}
        }
    }

    /// setopt(): sets one of the options that may change while tracing
    /// (DTrace's dynamic runtime options); anything else is an error
    /// reported as DTrace's dt_setopt reports it, and tracing goes on.
    fn setopt(&mut self, name: &str, value: Option<&str>, data: &[u8]) {
        let mut options = crate::flags::Options::default();
        let result = options.set(name, value).and_then(|()| {
            match name {
                "quiet" => self.quiet = options.quiet,
                "rawbytes" => self.rawbytes = options.rawbytes,
                "printsize" => self.printsize = options.printsize,
                "stackindent" => self.aggs.symbols.stack_indent = options.stackindent,
                "switchrate" => self.switchrate = options.switchrate,
                "aggrate" => self.aggrate = options.aggrate,
                "aggsortkey" | "aggsortkeypos" | "aggsortpos" | "aggsortrev" => {
                    self.aggs.sort.set(name, value)?;
                }
                "agghist" | "aggpack" | "aggzoom" | "encoding" => {
                    self.aggs.display.set(name, value)?;
                }
                "flowindent" => self.flows = options.flowindent.then(HashMap::new),
                _ => return Err("Operation illegal when tracing is active".to_string()),
            }
            Ok(())
        });
        if let Err(why) = result {
            let epid = self.shown_epid(read_u32(data, layout::HDR_EPID));
            let probe_id = read_u32(data, layout::HDR_PROBE_ID);
            let probe = self.probe(probe_id, |p| p.full_name()).unwrap_or_default();
            self.out.flush().ok();
            // An option without a value is set to "1"; DTrace's message
            // ends in a newline of its own, so a blank line follows.
            stderr_line!(
                "dtrace: error on enabled probe ID {epid} (ID {probe_id}: {probe}): couldn't set option \"{name}\" to \"{}\": {why}\n",
                value.unwrap_or("1")
            );
        }
    }

    /// system(): what is printed so far goes out first, then the command
    /// runs with dtrace's stdout and stderr, as DTrace runs it.
    /// Writes what the record printed before this action, so that an action
    /// with effects outside the output comes after it.
    fn flush_line(&mut self, rendered: &mut Rendered) {
        if let Rendered::Text(line) = rendered {
            self.out.write_all(line).ok();
            line.clear();
        }
        self.out.flush().ok();
    }

    fn system(&mut self, command: &[u8], rendered: &mut Rendered) {
        self.flush_line(rendered);
        let command = String::from_utf8_lossy(command).into_owned();
        if let Err(e) = std::process::Command::new("/bin/sh").arg("-c").arg(&command).status() {
            stderr_line!("dtrace: failed to execute '{command}': {e}");
        }
    }

    /// Clause `epid`'s enabled probe ID as DTrace shows it.
    fn shown_epid(&self, epid: u32) -> u32 {
        self.program.shown_epid(epid, self.registry.id_of("dtrace", "ERROR"))
    }

    fn fault(&mut self, data: &[u8], probe_id: u32) {
        if data.len() < layout::FAULT_SIZE {
            return;
        }
        let epid = self.shown_epid(read_u32(data, layout::FAULT_EPID));
        let action = read_u32(data, layout::FAULT_ACTION);
        let kind = read_u32(data, layout::FAULT_KIND);
        let pc = read_u32(data, layout::FAULT_PC);
        let addr = read_u64(data, layout::FAULT_ADDR);
        let probe = self.probe(probe_id, |p| p.full_name()).unwrap_or_default();
        let (fault, address) = match kind {
            layout::FAULT_DIVZERO => ("divide-by-zero", None),
            layout::FAULT_ILLOP => ("illegal operation", None),
            layout::FAULT_BADSIZE => ("invalid size", Some(addr)),
            layout::FAULT_BADINDEX => ("index out of bounds", Some(addr)),
            _ => ("invalid address", Some(addr)),
        };
        // dt_handle_err: an index is shown signed, in decimal.
        let what = match address {
            Some(a) if kind == layout::FAULT_BADINDEX => format!("{fault} ({})", a as i64),
            Some(a) => format!("{fault} (0x{a:x})"),
            None => fault.to_string(),
        };
        let place = if action == 0 { "predicate".to_string() } else { format!("action #{action}") };
        // Where DTrace names the DIF offset, dtrace-utils names the BPF pc.
        let at = if pc == u32::MAX { String::new() } else { format!(" at BPF pc {pc}") };
        let message = format!("error on enabled probe ID {epid} (ID {probe_id}: {probe}): {what} in {place}{at}");
        if self.format == OutputFormat::Json {
            let error = json::Fault { epid, probe_id, probe: &probe, fault, address, action, message: &message };
            self.write_json_line(&json::error(&error));
        }
        self.out.flush().ok();
        stderr_line!("dtrace: {message}");
    }
}

/// -F's FUNCTION column (dt_flowindent): ` -> func` on entry and ` <- func`
/// on return (`=>`/`<=` for system calls), indented two columns per entry
/// not yet returned; other probes show `| func:name`. A second clause on the
/// probe just entered does not indent again.
fn flow_column(flow: &mut Flow, probe: &crate::provider::Probe, epid: u32) -> String {
    let is_flow_name = |suffix: &str| probe.name == suffix || probe.name.ends_with(&format!("-{suffix}"));
    let syscall = usize::from(probe.provider == "syscall");
    let same_probe_again =
        matches!(flow.last, Some((last_epid, last_probe)) if last_epid != epid && last_probe == probe.id);
    flow.last = Some((epid, probe.id));
    let prefix = if is_flow_name("entry") && !same_probe_again {
        let text = format!("{:indent$}{}{}", "", [" -> ", " => "][syscall], probe.function, indent = flow.indent);
        flow.indent += 2;
        return text;
    } else if is_flow_name("return") && !same_probe_again {
        flow.indent = flow.indent.saturating_sub(2);
        [" <- ", " <= "][syscall]
    } else {
        return format!("{:indent$}| {}:{}", "", probe.function, probe.name, indent = flow.indent);
    };
    format!("{:indent$}{prefix}{}", "", probe.function, indent = flow.indent)
}

/// print()'s text of its recorded value.
fn print_text(node: &crate::sema::ir::PrintNode, value: &printf::Value, out: &mut Vec<u8>) {
    match *value {
        printf::Value::Int { bits, .. } | printf::Value::Float { bits, .. } => {
            print::print_value(node, &bits.to_le_bytes(), out)
        }
        printf::Value::Str(bytes) => print::print_value(node, bytes, out),
        printf::Value::Text(_) => {}
    }
}

/// The bytes tracemem() shows: a dynamic size of 0, or more than was
/// copied, shows everything.
fn tracemem_bytes<'v>(values: &[printf::Value<'v>]) -> &'v [u8] {
    let Some(printf::Value::Str(memory)) = values.first() else { return &[] };
    let shown = match values.get(1) {
        Some(printf::Value::Int { bits, .. }) if *bits != 0 => (*bits as usize).min(memory.len()),
        _ => memory.len(),
    };
    &memory[..shown]
}

/// trace()'s output: DTrace pads values to columns unless quiet.
fn trace_value(value: &printf::Value, quiet: bool, line: &mut Vec<u8>) {
    match value {
        // As the value's type says, signed or unsigned (dtrace-utils'
        // dt_print_trace), in DTrace's column widths.
        printf::Value::Int { bits, size, signed } => {
            let value = match (size, signed) {
                (8, true) => (*bits as i64).to_string(),
                (4, true) => (*bits as i32).to_string(),
                (2, true) => (*bits as i16).to_string(),
                (1, true) => (*bits as i8).to_string(),
                (8, false) => bits.to_string(),
                (4, false) => (*bits as u32).to_string(),
                (2, false) => (*bits as u16).to_string(),
                _ => (*bits as u8).to_string(),
            };
            let width = match size {
                8 => 16,
                4 => 8,
                2 => 5,
                _ => 3,
            };
            let text = if quiet { value } else { format!(" {value:>width$}") };
            line.extend(text.as_bytes());
        }
        printf::Value::Str(s) => {
            if quiet {
                line.extend_from_slice(s);
            } else {
                line.extend_from_slice(b"  ");
                line.extend_from_slice(s);
                line.extend(std::iter::repeat_n(b' ', 33usize.saturating_sub(s.len())));
            }
        }
        printf::Value::Text(t) => line.extend_from_slice(t),
        // D has no floating-point arithmetic: a float traced is its bits.
        printf::Value::Float { bits, size } => {
            trace_value(&printf::Value::Int { bits: *bits, size: *size, signed: true }, quiet, line)
        }
    }
}

/// tracemem()'s output: DTrace's dump of raw bytes (dt_print_bytes), a
/// header of column digits, then rows of 16 bytes in hex and as ASCII.
fn hex_dump(bytes: &[u8], line: &mut Vec<u8>) {
    const MARGIN: usize = 5;
    if bytes.is_empty() {
        return;
    }
    line.extend(format!("\n{:width$}", "", width = MARGIN + 6).bytes());
    for digit in "0123456789abcdef".chars() {
        line.extend(format!("  {digit}").bytes());
    }
    line.extend_from_slice(b"  0123456789abcdef\n");
    for (row, chunk) in bytes.chunks(16).enumerate() {
        line.extend(format!("{:MARGIN$}{:5x}:", "", row * 16).bytes());
        for b in chunk {
            line.extend(format!(" {b:02x}").bytes());
        }
        line.extend(std::iter::repeat_n(b' ', 3 * (16 - chunk.len()) + 2));
        line.extend(chunk.iter().map(|&b| if (b' '..=b'~').contains(&b) { b } else { b'.' }));
        line.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_column_indents_as_dt_flowindent() {
        let probe = crate::provider::Probe::unregistered;
        let (outer, inner) = (probe(10, "fbt", "outer", "entry"), probe(11, "fbt", "inner", "entry"));
        let (inner_ret, outer_ret) = (probe(12, "fbt", "inner", "return"), probe(13, "fbt", "outer", "return"));
        let mut flow = Flow::default();
        let columns: Vec<String> = [(&outer, 1), (&outer, 2), (&inner, 1), (&probe(5, "profile", "", "tick-1s"), 3)]
            .into_iter()
            .chain([(&inner_ret, 4), (&outer_ret, 4)])
            .map(|(p, epid)| flow_column(&mut flow, p, epid))
            .collect();
        // The second clause on `outer` shows without indenting again.
        assert_eq!(
            columns,
            [" -> outer", "  | outer:entry", "   -> inner", "    | :tick-1s", "   <- inner", " <- outer"]
        );
        let mut flow = Flow::default();
        assert_eq!(flow_column(&mut flow, &probe(4, "syscall", "read", "entry"), 1), " => read");
        assert_eq!(flow_column(&mut flow, &probe(5, "syscall", "read", "return"), 1), " <= read");
    }

    #[test]
    fn hex_dump_matches_dt_print_bytes() {
        let mut out = Vec::new();
        hex_dump(b"hello, world\x00\x01\x7f\x80ABCD", &mut out);
        let want = concat!(
            "\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n",
            "         0: 68 65 6c 6c 6f 2c 20 77 6f 72 6c 64 00 01 7f 80  hello, world....\n",
            "        10: 41 42 43 44                                      ABCD\n",
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let mut nothing = Vec::new();
        hex_dump(b"", &mut nothing);
        assert!(nothing.is_empty());
    }
}
