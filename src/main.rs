//! dtrace(1): parse the command line, run the requested mode, map the
//! outcome to DTrace's exit status (0 success, 1 error, 2 usage, or the
//! status a script passed to exit()).

/// eprintln!, except that a closed stderr ends dtrace by SIGPIPE, as it
/// ends DTrace (whose fprintf to it raises the signal), where Rust's
/// eprintln! panics.
macro_rules! stderr_line {
    ($($arg:tt)*) => {
        $crate::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// eprint! with stderr_line!'s end on a closed stderr.
macro_rules! stderr_text {
    ($($arg:tt)*) => {
        $crate::write_stderr(format_args!($($arg)*))
    };
}

/// A debugging line (-x debug, or DTRACE_DEBUG in the environment, as
/// libdtrace's dt_dprintf): `dtrace DEBUG <monotonic ns>: what happened`.
macro_rules! debug_line {
    ($($arg:tt)*) => {
        if $crate::debugging() {
            $crate::write_stderr(format_args!(
                "dtrace DEBUG {}: {}\n",
                $crate::runtime::monotonic_ns(),
                format_args!($($arg)*)
            ))
        }
    };
}

#[cfg(test)]
mod architecture_tests;
mod codegen;
mod compile;
mod consume;
mod defs;
mod diag;
mod flags;
mod kallsyms;
mod process;
mod provider;
mod runtime;
mod sema;
mod syntax;
mod target;
mod usdt_build;

use std::io::Write;
use std::process::ExitCode;

use flags::{Flags, ProgramSource};
use provider::Registry;

static DEBUGGING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether debug_line! writes (the debug option, or DTRACE_DEBUG set).
fn debugging() -> bool {
    DEBUGGING.load(std::sync::atomic::Ordering::Relaxed)
}

/// Turns debug_line! on: the debug option.
fn start_debugging() {
    DEBUGGING.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn main() -> ExitCode {
    if std::env::var_os("DTRACE_DEBUG").is_some() {
        start_debugging();
    }
    // Start-up's large buffers (the kernel's BTF, probe tables, verifier
    // logs) are freed once tracing runs; glibc raises its mmap threshold
    // as such blocks are freed, so later ones would stay in the heap's
    // resident pages for the whole run. Fixed at glibc's default, they are
    // returned when freed (BENCHMARKS.md's peak memory: about 0.4 MB).
    // SAFETY: mallopt only tunes the allocator; no allocation is in flight.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
    // Arguments are bytes: ones that are not UTF-8 are carried through (syntax::raw).
    let argv: Vec<String> = std::env::args_os().map(syntax::raw::text_from_os).collect();
    let flags = match flags::parse(argv) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    };
    match run(flags) {
        Ok(status) => ExitCode::from(status as u8),
        Err(message) => {
            stderr_line!("dtrace: {}", compile::without_os_error(&message));
            ExitCode::from(1)
        }
    }
}

fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp) {
        print!("{}", flags::command().render_help());
        return ExitCode::SUCCESS;
    }
    use clap::error::ContextKind;
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim_start_matches("error: ");
    if first.starts_with("failed to set -x") {
        stderr_line!("dtrace: {first}");
        return ExitCode::from(1);
    }
    // getopt's wording, as dtrace(1) prints it.
    let option = e.get(ContextKind::InvalidArg).map(|a| a.to_string()).unwrap_or_default();
    let letter = option.trim_start_matches('-').chars().next().unwrap_or('?');
    match e.kind() {
        ErrorKind::UnknownArgument => stderr_line!("dtrace: illegal option -- {letter}"),
        ErrorKind::InvalidValue | ErrorKind::NoEquals if option.starts_with('-') => {
            stderr_line!("dtrace: option requires an argument -- {letter}")
        }
        _ => stderr_line!("dtrace: {first}"),
    }
    stderr_line!("Usage: {}", flags::command().render_usage().to_string().trim_start_matches("Usage: "));
    ExitCode::from(2)
}

fn run(mut flags: Flags) -> Result<i32, String> {
    if flags.version {
        // Exactly illumos' line: scripts and test suites parse it. With -v,
        // the D version in the form cpp's __SUNW_D_VERSION encodes, as
        // dtrace-utils says it, then this implementation's.
        println!("dtrace: Sun D 1.13");
        if flags.verbose {
            println!("This is DTrace {}", compile::D_VERSION);
            println!("dtrace for Linux {}", env!("CARGO_PKG_VERSION"));
        }
        return Ok(0);
    }
    if let Some(why) = flags.unsupported {
        return Err(why.to_string());
    }
    // Opened first, as dtrace(1) opens it while reading its options: a bad
    // path is reported before anything is compiled or enabled.
    let output = match &flags.output {
        Some(path) if flags.generate.is_none() && !flags.list => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(syntax::raw::os_of(path))
                .map_err(|e| format!("failed to open output file '{path}': {}", compile::io_reason(&e)))?,
        ),
        _ => None,
    };
    let mut registry = Registry::with_kernel(Box::new(sema::kernel_btf::KernelBtf::default()));
    if flags.list {
        return list(&flags, &mut registry);
    }
    // -e with nothing to compile has only the -L libraries to read.
    if flags.sources.is_empty() && flags.compile_only {
        let mut types = std::collections::HashSet::new();
        compile::user_libraries(&flags.options.libdirs, &registry, &mut types)?;
        return Ok(0);
    }
    if flags.sources.is_empty() {
        stderr_line!("Usage: {}", flags::command().render_usage().to_string().trim_start_matches("Usage: "));
        return Ok(2);
    }
    // $0 is the script name (or "dtrace"), then the operands.
    let script_name = flags.sources.iter().find_map(|s| match s {
        ProgramSource::Script(p) => Some(p.clone()),
        _ => None,
    });
    let mut macro_args = vec![script_name.unwrap_or_else(|| "dtrace".to_string())];
    macro_args.extend(flags.args.iter().cloned());
    // With -G or -h the operands are object files, which no program references.
    if flags.generate.is_some() {
        flags.options.argref = true;
    }
    // As dtrace(1) does, processes are created (held before exec) or
    // grabbed before compiling: $target is the pid.
    let mut targets = target::Targets::start(
        &flags.targets,
        &flags.options.child_env,
        flags.options.evaltime,
        &mut registry.processes,
    )?;
    for (pid, program) in targets.held_programs() {
        registry.processes.set_exec_hint(pid, program);
    }
    registry.processes.targets = targets.pids();
    let compiled = compile::compile(
        &flags.sources,
        &macro_args,
        &mut flags.options,
        &mut registry,
        compile::Context {
            zero_matches_ok: flags.zero_matches_ok,
            target_pid: targets.last_pid(),
            task_storage: runtime::task_storage::usable,
            bpf_loop: runtime::bpf_loop_usable,
        },
    )?;
    debug_line!(
        "compiled {} clauses enabled on {} probes: {} programs, {} instructions",
        compiled.program.clauses.len(),
        compiled.generated.clauses_of.len(),
        compiled.generated.programs.len(),
        compiled.generated.programs.values().map(Vec::len).sum::<usize>()
    );
    if let Some(what) = flags.generate {
        return generate(what, &flags, &compiled);
    }
    if flags.show_programs || flags.options.verbose {
        let generated = &compiled.generated;
        for (clauses, insns) in &generated.programs {
            let variables = generated.variables.get(clauses).map_or(&[][..], |v| &v[..]);
            stderr_text!("{}", codegen::show_program(clauses, insns, variables, &compiled.program));
        }
        for clauses in &compiled.generated.chained {
            stderr_text!("{}", codegen::show_chained(clauses));
        }
    }
    if flags.compile_only {
        return Ok(0);
    }
    // ustack() frames are symbolized from the target's files, read now:
    // a short-lived target may be gone when its stacks are printed.
    if compiled.program.uses_ustack() {
        if let Some(pid) = targets.last_pid() {
            registry.processes.modules(pid);
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("failed to initialize dtrace: DTrace requires additional privileges".to_string());
    }
    if flags.options.flowindent && flags.options.oformat == flags::OutputFormat::Json {
        return Err("-F cannot be used with oformat=json: records carry their probe's function".to_string());
    }
    // Checked before anything is enabled: a bad path or label list attaches nothing.
    let metrics = match &flags.options.metricsfile {
        Some(path) => {
            Some(consume::metrics::MetricsFile::open(path, &flags.options.metrics_labels, &compiled.program)?)
        }
        None => None,
    };
    // Structured output is quiet: its records carry the probe (FreeBSD's dtrace sets quiet too).
    let quiet = flags.options.quiet || flags.options.oformat == flags::OutputFormat::Json;
    if !quiet {
        for (name, n) in &compiled.matches {
            stderr_line!("dtrace: {name} matched {n} probe{}", if *n == 1 { "" } else { "s" });
        }
    }
    // An empty program (the empty option) enables nothing.
    if compiled.program.clauses.is_empty() && flags.options.empty {
        return Err("no probes matched".to_string());
    }
    // As in DTrace, a destructive program compiles and is refused when enabled.
    if compiled.program.destructive && !flags.options.destructive {
        return Err("could not enable tracing: Destructive actions not allowed".to_string());
    }
    // A fill buffer keeps room for END's records.
    let end = registry.id_of("dtrace", "END");
    if flags.options.bufpolicy == flags::BufPolicy::Fill
        && compiled.program.end_reserve(end) > flags.options.bufsize as usize
    {
        return Err("could not enable tracing: END enablings exceed size of principal buffer".to_string());
    }
    // As dtrace_state_go, a buffer that cannot hold one word is refused
    // when a clause records; one smaller than a clause's record is that
    // clause's drop at each firing (the code generator's).
    if flags.options.bufsize < 8 && compiled.program.clauses.iter().any(|c| c.records) {
        return Err("could not enable tracing: Enabling exceeds size of buffer".to_string());
    }
    if runtime::enabling_exceeds_buffers(&compiled.program, flags.options.dynvarsize, flags.options.aggsize) {
        return Err("could not enable tracing: Enabling exceeds size of buffer".to_string());
    }
    // return() overrides a function's return value from a kprobe at its
    // entry (dtrace-utils' rawfbt, error injection); no probe this dtrace
    // has can (fbt is trampoline-first, as dtrace-utils' fbt), so every
    // clause that calls it is refused with dtrace-utils' words.
    if let Some(desc) = compiled.program.return_overrides.first() {
        return Err(format!("could not enable tracing: return() not allowed for {desc}"));
    }
    if let Some(reason) = &compiled.program.unavailable {
        return Err(format!("could not enable tracing: {reason}"));
    }
    // Under fill and ring the consumer keeps bufsize's worth per CPU; the
    // kernel's buffer only carries records to it, and must not drop them.
    let kernel_bufsize = match flags.options.bufpolicy {
        flags::BufPolicy::Switch => flags.options.bufsize,
        flags::BufPolicy::Fill | flags::BufPolicy::Ring => flags.options.bufsize.max(4 << 20),
    };
    let runtime_opts = runtime::RuntimeOptions {
        bufsize: kernel_bufsize,
        bufresize_auto: flags.options.bufresize_auto,
        nusdtprobes: flags.options.nusdtprobes,
        dynvarsize: flags.options.dynvarsize,
        aggsize: flags.options.aggsize,
        nspec: flags.options.nspec,
        cpu: flags.options.cpu,
        lockmem: flags.options.lockmem,
        bpflog: flags.options.bpflog.then_some(flags.options.bpflogsize),
    };
    let session = runtime::start(&compiled.program, &compiled.generated, &registry, &runtime_opts)
        .map_err(|e| format!("could not enable tracing: {e:#}"))?;
    for warning in &session.warnings {
        stderr_line!("dtrace: {warning}");
    }
    // dtrace.c's notice once tracing is enabled (silent when quiet).
    if flags.options.destructive && !quiet {
        stderr_line!("dtrace: allowing destructive actions");
    }
    let output_fd = {
        use std::os::fd::AsRawFd;
        output.as_ref().map_or(libc::STDOUT_FILENO, |file| file.as_raw_fd())
    };
    let out: Box<dyn Write> = match output {
        Some(file) => Box::new(std::io::BufWriter::new(file)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    };
    consume::install_signal_handlers();
    let opts = consume::ConsumeOptions {
        quiet,
        fill: (flags.options.bufpolicy == flags::BufPolicy::Fill).then_some(flags.options.bufsize as usize),
        ring: (flags.options.bufpolicy == flags::BufPolicy::Ring).then_some(flags.options.bufsize as usize),
        switchrate: flags.options.switchrate,
        aggsort: flags.options.aggsort.clone(),
        aggdisplay: flags.options.aggdisplay,
        flowindent: flags.options.flowindent,
        format: flags.options.oformat,
        print_aggregations_at_exit: flags.options.print_aggregations_at_exit,
        aggrate: flags.options.aggrate,
        statusrate: flags.options.statusrate,
        stackindent: flags.options.stackindent,
        rawbytes: flags.options.rawbytes,
        printsize: flags.options.printsize,
        temporal: flags.options.temporal,
        droptags: flags.options.droptags,
        // dtrace-utils' test mode: its test suite's expected outputs.
        testing: std::env::var_os("_DTRACE_TESTING").is_some(),
        output_fd,
    };
    let outcome =
        consume::run(&session, &compiled.program, &compiled.generated, &registry, &opts, out, metrics, &mut targets);
    drop(session);
    match outcome {
        Ok(status) => Ok(status),
        Err(e) => match e.downcast_ref::<consume::OutputFailure>() {
            // Detached: now end as DTrace does when its reader goes away.
            Some(consume::OutputFailure::ReaderGone) => {
                drop(targets);
                die_of_sigpipe()
            }
            _ => Err(format!("{e:#}")),
        },
    }
}

/// Writes to stderr; a reader gone ends dtrace by SIGPIPE (the kernel
/// detaches its probes as its descriptors close).
fn write_stderr(text: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stderr().lock().write_fmt(text) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            let _ = die_of_sigpipe();
        }
    }
}

/// Ends dtrace by SIGPIPE, as a closed pipe ends DTrace (which does not
/// catch it): `dtrace ... | head` exits as every filter in a pipeline does.
fn die_of_sigpipe() -> Result<i32, String> {
    // SAFETY: restores the default action and raises the signal on ourselves.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    Ok(1)
}

/// -h, -G: writes the header or the semaphores' object of the scripts'
/// provider definitions, to -o or to the first script's name with `.h` or
/// `.o` for `.d`.
fn generate(what: flags::Generate, flags: &Flags, compiled: &compile::Compiled) -> Result<i32, String> {
    let script = flags.sources.iter().find_map(|s| match s {
        ProgramSource::Script(p) if p != "-" => Some(p.as_str()),
        _ => None,
    });
    let (option, suffix) = match what {
        flags::Generate::Header => ("-h", "h"),
        flags::Generate::Object => ("-G", "o"),
    };
    // As dtrace.c's link_prog: a script named *.d gives its base name with
    // the suffix; another (/dev/stdin) gives d.out.
    let path = match (&flags.output, script) {
        (Some(path), _) => path.clone(),
        (None, Some(script)) => std::path::Path::new(script)
            .file_name()
            .and_then(|n| n.to_str()?.strip_suffix(".d").map(|stem| format!("{stem}.{suffix}")))
            .unwrap_or_else(|| "d.out".to_string()),
        (None, None) => return Err(format!("{option} requires a script (-s) or an output file (-o)")),
    };
    let bytes = match what {
        flags::Generate::Header => usdt_build::header(&compiled.providers, &path)?.into_bytes(),
        flags::Generate::Object => usdt_build::semaphore_object(&compiled.providers, &flags.args, &path)?,
    };
    std::fs::write(syntax::raw::os_of(&path), bytes)
        .map_err(|e| format!("failed to write {path}: {}", compile::io_reason(&e)))?;
    Ok(0)
}

/// Whether `text` mentions macro argument `n` (`$n` or `$$n`, not `$n0`).
fn references_macro(text: &str, n: usize) -> bool {
    let name = format!("${n}");
    text.match_indices(&name).any(|(at, _)| !text[at + name.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// -l: list the probes matching the descriptions (all probes without any).
fn list(flags: &Flags, registry: &mut Registry) -> Result<i32, String> {
    // -c/-p give $target (pid provider probes); a created command never
    // runs: it exits when `targets` is dropped.
    let targets = target::Targets::start(
        &flags.targets,
        &flags.options.child_env,
        flags.options.evaltime,
        &mut registry.processes,
    )?;
    for (pid, program) in targets.held_programs() {
        registry.processes.set_exec_hint(pid, program);
    }
    registry.processes.targets = targets.pids();
    let target_pid = targets.last_pid();
    let mut ids: Vec<u32> = Vec::new();
    let mut descs = Vec::new();
    let mut unmatched = Vec::new();
    let mut status = 0;
    // An operand no description references is extraneous (unless -x
    // argref), reported against the first, as when enabling.
    let texts: Vec<&String> = flags
        .sources
        .iter()
        .filter_map(|s| match s {
            ProgramSource::Probe { given: text, .. } | ProgramSource::Description(text) => Some(text),
            ProgramSource::Script(_) => None,
        })
        .collect();
    if let (Some(first), false) = (texts.first(), flags.options.argref) {
        if let Some(n) = (1..=flags.args.len()).rev().find(|n| !texts.iter().any(|t| references_macro(t, *n))) {
            return Err(format!(
                "invalid probe specifier {first}: extraneous argument '{}' (${n} is not referenced)",
                flags.args[n - 1]
            ));
        }
    }
    for source in &flags.sources {
        match source {
            ProgramSource::Probe { desc: Ok(text), given } if text.starts_with('#') => {
                // -l implies -Z (dtrace.c): an -i operand whose text past
                // the digits (`2-2`, `-3`) names no probe is reported and
                // the listing goes on.
                let id = crate::flags::probe_id(given, |id| registry.get(id).is_some());
                let text = crate::flags::split_clause(given).0.trim();
                let name = text.trim_start_matches(|c: char| c.is_ascii_digit());
                let digits = &text[..text.len() - name.len()];
                match id {
                    Ok(id) => ids.push(id),
                    Err(_) if !name.is_empty() && !digits.is_empty() => ids.push(
                        crate::flags::probe_id(digits, |id| registry.get(id).is_some())
                            .map_err(|why| format!("invalid probe specifier {given}: {why}"))?,
                    ),
                    Err(_) if !name.is_empty() => {}
                    Err(why) => return Err(format!("invalid probe specifier {given}: {why}")),
                }
                if !name.is_empty() {
                    status = 1;
                    unmatched.push(format!("dtrace: failed to match :::{name}: No probe matches description"));
                }
            }
            ProgramSource::Probe { desc: Err(why), given } => {
                return Err(format!("invalid probe specifier {given}: {why}"));
            }
            ProgramSource::Probe { desc: Ok(text), given } => descs.push((given.clone(), text.clone())),
            ProgramSource::Description(text) => {
                let by_id = compile::probe_by_id(text, registry)
                    .transpose()
                    .map_err(|why| format!("invalid probe specifier {text}: {why}"))?;
                let text = by_id.as_ref().unwrap_or(text);
                let spec = text.split(['{', '/']).next().unwrap_or("").trim();
                for d in spec.split(',').map(str::trim) {
                    descs.push((d.to_string(), d.to_string()));
                }
            }
            ProgramSource::Script(_) => {
                let compiled = compile::compile(
                    std::slice::from_ref(source),
                    &[String::new()],
                    &mut flags.options.clone(),
                    registry,
                    compile::Context { zero_matches_ok: true, target_pid, task_storage: || false, bpf_loop: || false },
                )?;
                for clause in &compiled.program.clauses {
                    ids.extend(&clause.probes);
                }
            }
        }
    }
    for (given, d) in &descs {
        // A clause after an -P/-m/-f/-n operand is not listed.
        let d = crate::flags::split_clause(d).0.trim();
        let macro_args: Vec<String> = std::iter::once("dtrace".to_string()).chain(flags.args.iter().cloned()).collect();
        let expanded = provider::desc::expand_macros(d, &macro_args, &|w| {
            provider::desc::macro_variable(w, target_pid).map(|v| v.to_string())
        })
        .map_err(|m| format!("invalid probe specifier {given}: {m}"))?;
        let desc =
            provider::desc::ProbeDesc::parse(&expanded).map_err(|m| format!("invalid probe specifier {given}: {m}"))?;
        let found = registry.matching(&desc).map_err(|r| format!("invalid probe specifier {given}: {}", r.message))?;
        // -l implies -Z (dtrace.c): a description that matches nothing is
        // reported as list_stmt reports it and the listing goes on; the
        // exit status says so, unless -Z was asked for or the provider is
        // a process's (`test_prov1234`, whose probes come and go with its
        // libraries).
        if found.is_empty() {
            if !flags.zero_matches_ok && provider::desc::split_pid(&desc.provider).1.is_none() {
                status = 1;
            }
            unmatched.push(format!(
                "dtrace: failed to match {}:{}:{}:{}: No probe matches description",
                desc.provider, desc.module, desc.function, desc.name
            ));
        }
        ids.extend(found);
    }
    let all = flags.sources.is_empty();
    if all {
        // The providers that list their probes only when a description
        // could name one (fbt, sdt, rawtp): all of them.
        if let Ok(desc) = provider::desc::ProbeDesc::parse(":::") {
            let _ = registry.matching(&desc);
        }
        // As dtrace -l -p lists the process's USDT probes with the rest.
        for pid in targets.pids() {
            if let Ok(desc) = provider::desc::ProbeDesc::parse(&format!("*{pid}:::")) {
                let _ = registry.matching(&desc);
            }
        }
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = writeln!(out, "{:>5} {:>10} {:>17} {:>33} NAME", "ID", "PROVIDER", "MODULE", "FUNCTION");
    let _ = out.flush();
    for line in unmatched {
        stderr_line!("{line}");
    }
    ids.sort_unstable();
    ids.dedup();
    for p in registry.all() {
        if all || ids.binary_search(&p.id).is_ok() {
            let _ = writeln!(out, "{:>5} {:>10} {:>17} {:>33} {}", p.id, p.provider, p.module, p.function, p.name);
            if flags.verbose {
                let _ = write!(out, "{}", registry.verbose_info(p.id));
            }
        }
    }
    Ok(status)
}
