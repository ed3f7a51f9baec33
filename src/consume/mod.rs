//! The consumer: drains the ring buffer on a timer (switchrate), decodes
//! each record with the layout the type checker computed for its clause, and
//! prints it exactly as DTrace does: the `CPU ID FUNCTION:NAME` prefix
//! unless quiet, trace() and printf() output, runtime errors and drops.
//! Speculative records wait, by their speculation's tag, for the record of
//! its commit() (then they are printed, in order) or discard().

pub(crate) mod aggfmt;
mod aggregate;
mod ksyms;
mod print;
pub(crate) mod printf;
mod usyms;

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::defs::layout::{self, read_u32, read_u64};
use crate::provider::Registry;
use crate::runtime::{Session, SpeculationTroubles};
use crate::sema::ir::{ActionLayout, Program, RecordKind, ValueLayout};

/// How often drop counters are read (DTrace's default statusrate).
const STATUS_RATE: Duration = Duration::from_secs(1);

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
    pub switchrate: Duration,
    pub aggsort: crate::flags::AggSortOptions,
    /// -F: indent entry/return records by call depth.
    pub flowindent: bool,
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
    quiet: bool,
    /// -F: the flow of each CPU, when indenting.
    flows: Option<HashMap<u32, Flow>>,
    out: Box<dyn Write + 'a>,
    /// exit(N) seen: the status to exit with.
    exit_status: Option<i32>,
    /// Set once END fires: its records are wanted even after exit().
    ending: bool,
    /// DTrace prints the column heading before the first record, not at start.
    heading_printed: bool,
    aggs: aggregate::Aggregations<'a>,
    /// The records of each speculation not yet committed or discarded, in
    /// order, by the speculation's tag.
    speculations: HashMap<u32, Vec<Vec<u8>>>,
}

/// Runs the session until exit(), a signal, or nothing left to trace; then
/// fires END and drains the last records. Returns dtrace's exit status.
pub(crate) fn run(
    session: &Session,
    program: &Program,
    registry: &Registry,
    opts: &ConsumeOptions,
    out: Box<dyn Write + '_>,
    targets: &mut crate::target::Targets,
) -> Result<i32> {
    let state = Rc::new(RefCell::new(State {
        program,
        registry,
        quiet: opts.quiet,
        flows: opts.flowindent.then(HashMap::new),
        out,
        exit_status: None,
        heading_printed: false,
        ending: false,
        aggs: aggregate::Aggregations::new(
            program,
            session,
            opts.aggsort.clone(),
            usyms::UserSymbols::new(registry.processes.known_files()),
        ),
        speculations: HashMap::new(),
    }));
    let mut builder = libbpf_rs::RingBufferBuilder::new();
    let cb_state = Rc::clone(&state);
    builder.add(session.events_map(), move |data: &[u8]| {
        cb_state.borrow_mut().record(data);
        0
    })?;
    let ring = builder.build()?;
    let mut drops_seen: Vec<u64> = Vec::new();
    let mut agg_drops_seen: Vec<u64> = Vec::new();
    let mut speculation_troubles_seen = SpeculationTroubles::default();
    let mut report_drops = |session: &Session| {
        report_new_drops(&session.drops(), &mut drops_seen, "drop");
        report_new_drops(&session.aggregation_drops(), &mut agg_drops_seen, "aggregation drop");
        report_speculation_troubles(session.speculation_troubles(), &mut speculation_troubles_seen);
    };

    session.fire_begin()?;
    session.start_timers()?;
    targets.release();
    let mut last_status = std::time::Instant::now();
    loop {
        // Like dtrace(1), answer an interrupt with a newline (even when quiet),
        // which ends the terminal's "^C" line. Read once: a signal arriving
        // later in this pass is answered by the next.
        let interrupted = INTERRUPTED.load(Ordering::SeqCst);
        // Checked before draining, so the targets' last records are printed,
        // then reported after them.
        let exit_notices = targets.check_exits();
        if interrupted {
            state.borrow_mut().out.write_all(b"\n").ok();
        }
        ring.consume()?;
        state.borrow_mut().out.flush().ok();
        for notice in exit_notices {
            eprintln!("dtrace: {notice}");
        }
        // Drop counters are read at DTrace's statusrate, not at every drain.
        if last_status.elapsed() >= STATUS_RATE {
            report_drops(session);
            last_status = std::time::Instant::now();
        }
        if state.borrow().exit_status.is_some() || interrupted || targets.all_exited() {
            break;
        }
        std::thread::sleep(opts.switchrate);
    }
    state.borrow_mut().ending = true;
    session.fire_end()?;
    ring.consume()?;
    report_drops(session);
    let mut st = state.borrow_mut();
    // dtrace(1) ends with a newline, even when quiet, then the aggregations.
    let mut text = vec![b'\n'];
    st.aggs.print_unprinted(&mut text);
    st.out.write_all(&text).ok();
    st.out.flush().ok();
    Ok(st.exit_status.unwrap_or(0))
}

/// `dtrace: N drops on CPU C` for what was lost since the last report.
fn report_new_drops(now: &[u64], seen: &mut Vec<u64>, what: &str) {
    for (cpu, &n) in now.iter().enumerate() {
        let before = seen.get(cpu).copied().unwrap_or(0);
        if n > before {
            eprintln!("dtrace: {} {what}{} on CPU {cpu}", n - before, if n - before == 1 { "" } else { "s" });
        }
    }
    *seen = now.to_vec();
}

/// Speculative drops and failed speculations since the last report, in
/// DTrace's words (dt_handle_status).
fn report_speculation_troubles(now: SpeculationTroubles, seen: &mut SpeculationTroubles) {
    let kinds = [
        (now.drops, seen.drops, "speculative drop", ""),
        (now.busy, seen.busy, "failed speculation", " (available buffer(s) still busy)"),
        (now.unavailable, seen.unavailable, "failed speculation", " (no speculative buffer available)"),
    ];
    for (total, before, what, why) in kinds {
        let n = total.saturating_sub(before);
        if n > 0 {
            eprintln!("dtrace: {n} {what}{}{why}", if n == 1 { "" } else { "s" });
        }
    }
    *seen = now;
}

impl State<'_> {
    fn record(&mut self, data: &[u8]) {
        if data.len() < layout::HDR_SIZE {
            return;
        }
        let spec = read_u32(data, layout::HDR_SPEC);
        match read_u32(data, layout::HDR_EPID) {
            layout::EPID_FAULT => self.fault(&data[layout::HDR_SIZE..], read_u32(data, layout::HDR_PROBE_ID)),
            layout::EPID_COMMIT => {
                for record in self.speculations.remove(&spec).unwrap_or_default() {
                    self.print_record(&record);
                }
            }
            layout::EPID_DISCARD => {
                self.speculations.remove(&spec);
            }
            _ if spec != 0 => self.speculations.entry(spec).or_default().push(data.to_vec()),
            _ => self.print_record(data),
        }
    }

    /// Prints a clause's record: the probe columns unless quiet, then its actions.
    fn print_record(&mut self, data: &[u8]) {
        let epid = read_u32(data, layout::HDR_EPID);
        let probe_id = read_u32(data, layout::HDR_PROBE_ID);
        let cpu = read_u32(data, layout::HDR_CPU);
        let present = read_u64(data, layout::HDR_PRESENT);
        // Records after exit() belong to a run that is over.
        if self.exit_status.is_some() && !self.ending {
            return;
        }
        let Some(clause) = self.program.clauses.get(epid as usize - 1) else { return };
        self.aggs.begin_record();
        let mut line = Vec::new();
        if let Some(flows) = &mut self.flows {
            // dtrace(1) prints the flow columns even when quiet.
            if !self.heading_printed {
                line.extend(format!("{:>3} {:<41}\n", "CPU", "FUNCTION").as_bytes());
                self.heading_printed = true;
            }
            let flow = flows.entry(cpu).or_default();
            let name = self.registry.get(probe_id).map(|p| flow_column(flow, p, epid)).unwrap_or_default();
            line.extend(format!("{cpu:>3} {name:<41} ").as_bytes());
        } else if !self.quiet {
            if !self.heading_printed {
                line.extend(format!("{:>3} {:>6} {:>32}\n", "CPU", "ID", "FUNCTION:NAME").as_bytes());
                self.heading_printed = true;
            }
            let name = self.registry.get(probe_id).map(|p| format!("{}:{}", p.function, p.name)).unwrap_or_default();
            line.extend(format!("{cpu:>3} {probe_id:>6} {name:>32} ").as_bytes());
        }
        for (i, action) in clause.actions.iter().enumerate() {
            if present & (1u64 << i) == 0 {
                continue;
            }
            self.action(action, data, &mut line);
        }
        if !self.quiet {
            line.push(b'\n');
        }
        self.out.write_all(&line).ok();
    }

    fn action(&mut self, action: &ActionLayout, data: &[u8], line: &mut Vec<u8>) {
        let strsize = self.program.strsize;
        let mut offset = action.offset;
        let mut values = Vec::new();
        for v in &action.values {
            let end = (offset + v.bytes(strsize)).min(data.len());
            let bytes = &data[offset.min(end)..end];
            values.push(match v {
                ValueLayout::Int { size, signed } => {
                    printf::Value::Int { bits: read_u64(bytes, 0), size: *size, signed: *signed }
                }
                // The stack ID: %k renders it through FormatContext::stack.
                ValueLayout::Stack => printf::Value::Str(bytes),
                ValueLayout::Str => {
                    printf::Value::Str(&bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())])
                }
                ValueLayout::Memory(size) => printf::Value::Str(&bytes[..(*size).min(bytes.len())]),
            });
            offset = end;
        }
        match &action.kind {
            // A struct or an array traced whole prints as DTrace prints raw bytes.
            RecordKind::Trace => match (&action.values[0], &values[0]) {
                (ValueLayout::Memory(_), printf::Value::Str(bytes)) => hex_dump(bytes, line),
                _ => trace_value(&values[0], self.quiet, line),
            },
            RecordKind::Print(node) => match values[0] {
                printf::Value::Int { bits, .. } => print::print_value(node, &bits.to_le_bytes(), line),
                printf::Value::Str(bytes) => print::print_value(node, bytes, line),
                printf::Value::Text(_) => {}
            },
            RecordKind::Printf(format) => {
                printf::format(&self.program.formats[*format], &values, &self.aggs.symbols, line)
            }
            RecordKind::System(format) => {
                let mut command = Vec::new();
                printf::format(&self.program.formats[*format], &values, &self.aggs.symbols, &mut command);
                self.system(&command, line);
            }
            RecordKind::Tracemem { .. } => {
                if let printf::Value::Str(memory) = values[0] {
                    // A dynamic size of 0, or more than was copied, shows everything.
                    let shown = match values.get(1) {
                        Some(printf::Value::Int { bits, .. }) if *bits != 0 => (*bits as usize).min(memory.len()),
                        _ => memory.len(),
                    };
                    hex_dump(&memory[..shown], line);
                }
            }
            RecordKind::Stack => {
                if let printf::Value::Str(record) = values[0] {
                    self.aggs.symbols.write_stack(read_u64(record, 0), line);
                }
            }
            RecordKind::Exit => {
                if let printf::Value::Int { bits, .. } = values[0] {
                    self.exit_status = Some(bits as i32);
                }
            }
            RecordKind::Printa { format, aggs } => match format {
                Some(f) => self.aggs.print_formatted(&self.program.formats[*f], aggs, line),
                None => self.aggs.print_default(aggs, line),
            },
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
                // Unknown or non-sort options are ignored at run time, as DTrace ignores
                // options it cannot change while tracing.
                let _ = self.aggs.sort.set(name, value.as_deref());
            }
        }
    }

    /// system(): what is printed so far goes out first, then the command
    /// runs with dtrace's stdout and stderr, as DTrace runs it.
    fn system(&mut self, command: &[u8], line: &mut Vec<u8>) {
        self.out.write_all(line).ok();
        line.clear();
        self.out.flush().ok();
        let command = String::from_utf8_lossy(command).into_owned();
        if let Err(e) = std::process::Command::new("/bin/sh").arg("-c").arg(&command).status() {
            eprintln!("dtrace: failed to execute '{command}': {e}");
        }
    }

    fn fault(&mut self, data: &[u8], probe_id: u32) {
        if data.len() < layout::FAULT_SIZE {
            return;
        }
        let epid = read_u32(data, layout::FAULT_EPID);
        let action = read_u32(data, layout::FAULT_ACTION);
        let kind = read_u32(data, layout::FAULT_KIND);
        let addr = read_u64(data, layout::FAULT_ADDR);
        let probe = self.registry.get(probe_id).map(|p| p.full_name()).unwrap_or_default();
        let what = match kind {
            layout::FAULT_DIVZERO => "divide-by-zero".to_string(),
            layout::FAULT_ILLOP => "illegal operation".to_string(),
            _ => format!("invalid address (0x{addr:x})"),
        };
        let place = if action == 0 { "predicate".to_string() } else { format!("action #{action}") };
        self.out.flush().ok();
        eprintln!("dtrace: error on enabled probe ID {epid} (ID {probe_id}: {probe}): {what} in {place}");
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
