//! The dtrace(1) command line: option definitions (clap), DTrace's option
//! names for -x and #pragma D option, and their values.

use std::time::Duration;

use clap::{Arg, ArgAction, Command};

/// Where a D program comes from, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProgramSource {
    /// -n: a probe description with optional predicate and actions.
    Description(String),
    /// -s: a script file.
    Script(String),
    /// -P, -m, -f, -i: a probe description naming just that field (`desc`,
    /// the fields given filled in right to left from it, as dtrace_str2desc
    /// does), or why `given` makes none (too many fields); messages name
    /// what was given.
    Probe { desc: Result<String, String>, given: String },
}

/// A process whose pid becomes `$target`, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TargetSpec {
    /// -c: a command line dtrace runs.
    Command(String),
    /// -p: a running process dtrace watches.
    Pid(String),
}

#[derive(Debug, Clone)]
pub(crate) struct Flags {
    pub sources: Vec<ProgramSource>,
    /// Operands after the options: `$1`, `$2`, ...
    pub args: Vec<String>,
    pub list: bool,
    /// -v: with -l, each probe's stability attributes and argument types.
    pub verbose: bool,
    pub compile_only: bool,
    pub output: Option<String>,
    pub zero_matches_ok: bool,
    pub version: bool,
    pub targets: Vec<TargetSpec>,
    /// -S: show the generated programs.
    pub show_programs: bool,
    /// -h or -G: write the header or the object of the USDT probes the
    /// scripts' provider definitions declare, instead of tracing.
    pub generate: Option<Generate>,
    /// -32: asked for what this dtrace cannot do, with its reason.
    pub unsupported: Option<&'static str>,
    pub options: Options,
}

/// What -h and -G write for programs that define USDT probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generate {
    /// -h: a C header with the probe macros.
    Header,
    /// -G: the object file that defines the probes' semaphores.
    Object,
}

/// Bytes that hold a string of `max_strlen` characters and its NUL, in the
/// 8-byte units the generated code copies strings in.
pub(crate) fn string_buffer_bytes(max_strlen: usize) -> usize {
    (max_strlen + 1).next_multiple_of(8)
}

/// Values of DTrace's runtime and compiler options (-x, #pragma D option, -q, -w).
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub quiet: bool,
    /// The D version programs are compiled for (`version`), as (major,
    /// minor): names of later versions' subroutines are free before them.
    pub d_version: (u32, u32),
    /// Bytes of a string's buffer: room for max_strlen characters and the
    /// NUL, in the 8-byte units the generated code copies.
    pub strsize: usize,
    /// The strsize option: the most characters a string holds.
    pub max_strlen: usize,
    /// Bytes of alloca() (and copyin()) memory one clause may use.
    pub scratchsize: usize,
    /// tregs: the most elements of a tuple (an aggregation's keys, an
    /// associative array's), when set; DTrace's code generator passes a
    /// tuple in this many registers.
    pub tregs: Option<usize>,
    /// pspec: a file-scope item that could be a declaration or a probe
    /// description is read as a description (`int*x` names probes).
    pub pspec: bool,
    /// The principal buffer's bytes (bufsize): any size parses; the kernel
    /// gets at most what it can map (see `bufresize`).
    pub bufsize: u64,
    pub switchrate: Duration,
    pub dynvarsize: u64,
    pub destructive: bool,
    pub zdefs: bool,
    /// An empty program compiles (it then matches no probes).
    pub empty: bool,
    /// Compile errors carry their D_* tag.
    pub errtags: bool,
    /// Drop reports name their kind first (`[DTRACEDROP_PRINCIPAL]`).
    pub droptags: bool,
    /// -C: scripts go through the C preprocessor first.
    pub cpp: bool,
    /// -D, -U, -I for the preprocessor.
    pub cpp_args: Vec<String>,
    /// Directories of D library files (-L, -x libdir), loaded before the
    /// program in dependency order.
    pub libdirs: Vec<std::path::PathBuf>,
    /// Bytes per CPU for each aggregation, when set (-x aggsize).
    pub aggsize: Option<u64>,
    /// How often the consumer reads aggregations for printa (aggrate).
    pub aggrate: Duration,
    pub aggsort: AggSortOptions,
    /// agghist, aggpack, aggzoom, encoding.
    pub aggdisplay: AggDisplayOptions,
    /// How many speculations may be in use at once.
    pub nspec: u32,
    /// Bytes of records one speculation may hold.
    pub specsize: u64,
    /// -F: indent entry/return output by call depth.
    pub flowindent: bool,
    /// Frames ustack() keeps (ustackframes; at most the kernel's 127).
    pub ustackframes: u32,
    /// Frames jstack() keeps (jstackframes).
    pub jstackframes: u32,
    /// Frames stack() keeps when not given a count (stackframes).
    pub stackframes: u32,
    /// RLIMIT_MEMLOCK for BPF maps and programs (lockmem; None: libbpf's
    /// unlimited). Kernels before 5.11 charge BPF memory to it; later ones
    /// charge the memory cgroup and ignore it, as dtrace-utils notes.
    pub lockmem: Option<u64>,
    /// bpflog: print the verifier's log of each clause program loaded.
    pub bpflog: bool,
    /// bpflogsize: the bytes of that log kept (Oracle's default, 16 MB).
    pub bpflogsize: u32,
    /// Most frames any stack()/ustack() keeps, whatever it asks for
    /// (maxframes, dtrace-utils' cap).
    pub maxframes: u32,
    /// Spaces before each frame of a printed stack (stackindent).
    pub stackindent: usize,
    /// How often drops and other losses are reported (statusrate).
    pub statusrate: Duration,
    /// Trace only on this CPU (cpu).
    pub cpu: Option<u32>,
    /// Unreferenced macro arguments are 0 or "" (defaultargs).
    pub defaultargs: bool,
    /// Macro arguments the script never references are allowed (argref).
    pub argref: bool,
    /// trace() of a string shows its bytes, as of other data (rawbytes).
    pub rawbytes: bool,
    /// The most bytes of an object print() of a pointer shows (printsize);
    /// the record holds up to 8 KB of it.
    pub printsize: usize,
    /// Records are printed in the order of their firings' timestamps, not
    /// of their arrival (temporal).
    pub temporal: bool,
    /// Show the generated programs, as -S does (verbose).
    pub verbose: bool,
    /// The preprocessor -C runs (cpppath), instead of the first found.
    pub cpppath: Option<String>,
    /// setenv/unsetenv: changes to the environment of -c commands, in order.
    pub child_env: Vec<(String, Option<String>)>,
    /// evaltime: where -c commands stop for tracing to begin.
    pub evaltime: EvalTime,
    pub bufpolicy: BufPolicy,
    /// bufresize=auto (the default): a buffer too big to allocate is
    /// halved until it fits; manual: tracing fails.
    pub bufresize_auto: bool,
    /// nusdtprobes: the most USDT probes of processes found after tracing
    /// began (provider globs) enabled at a time.
    pub nusdtprobes: u32,
    /// oformat: DTrace's text, or FreeBSD's structured records as JSON.
    pub oformat: OutputFormat,
    /// -O: with oformat=json, the aggregations are printed at exit too.
    pub print_aggregations_at_exit: bool,
    /// metricsfile: where the aggregations are kept as Prometheus text.
    pub metricsfile: Option<String>,
    /// metricslabels=agg:label,...: the label names of an aggregation's
    /// keys in the metrics file (`key0`, `key1`, ... otherwise).
    pub metrics_labels: Vec<(String, Vec<String>)>,
}

/// The principal buffer policy (bufpolicy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum BufPolicy {
    #[default]
    Switch,
    Fill,
    Ring,
}

/// Where a -c command is stopped for tracing to begin (the evaltime
/// option, DTrace's dt_prcmode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum EvalTime {
    /// Before its first instruction (held before exec).
    Exec,
    /// Its libraries loaded, their initializers not yet run (its entry point).
    Preinit,
    /// After its initializers, before main: DTrace's default.
    #[default]
    Postinit,
    /// At main.
    Main,
}

/// How records and aggregations are written (the oformat option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum OutputFormat {
    /// DTrace's text, for a person at a terminal.
    #[default]
    Text,
    /// One JSON object per line, structured as FreeBSD's dtrace -x oformat=json.
    Json,
}

/// How aggregations are sorted for printing: aggsortkey, aggsortkeypos,
/// aggsortpos, aggsortrev. Also settable at run time with setopt().
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AggSortOptions {
    /// Sort by key first, then value.
    pub by_key: bool,
    /// Which key column sorts first.
    pub key_position: usize,
    /// With several aggregations in one printa(), which one's value sorts.
    pub position: usize,
    pub reverse: bool,
}

impl AggSortOptions {
    /// Applies one option by name; false when `name` is not a sort option.
    pub(crate) fn set(&mut self, name: &str, value: Option<&str>) -> Result<bool, String> {
        let bad = || "Invalid value for specified option".to_string();
        let number = |v: Option<&str>| -> Result<usize, String> {
            let n = runtime_value(v).ok_or_else(bad)?.unwrap_or(0);
            usize::try_from(n).map_err(|_| bad())
        };
        match name {
            "aggsortkey" => self.by_key = flag_value(value).ok_or_else(bad)?,
            "aggsortrev" => self.reverse = flag_value(value).ok_or_else(bad)?,
            "aggsortkeypos" => self.key_position = number(value)?,
            "aggsortpos" => self.position = number(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// How aggregations are drawn (illumos' and FreeBSD's options, settable
/// at run time with setopt()): agghist draws count() and sum() values as
/// bars, aggpack packs quantize() and lquantize() into one line a key,
/// aggzoom scales bars to the largest value, encoding picks the characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AggDisplayOptions {
    pub hist: bool,
    pub pack: bool,
    pub zoom: bool,
    pub encoding: Encoding,
}

/// The encoding option: auto (UTF-8 for packed aggregations unless TERM
/// names a terminal without it), ascii or utf8.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Encoding {
    #[default]
    Auto,
    Ascii,
    Utf8,
}

impl AggDisplayOptions {
    /// Applies one option by name; false when `name` is not one of these.
    pub(crate) fn set(&mut self, name: &str, value: Option<&str>) -> Result<bool, String> {
        let bad = || "Invalid value for specified option".to_string();
        match name {
            "agghist" => self.hist = flag_value(value).ok_or_else(bad)?,
            "aggpack" => self.pack = flag_value(value).ok_or_else(bad)?,
            "aggzoom" => self.zoom = flag_value(value).ok_or_else(bad)?,
            "encoding" => {
                self.encoding = match value {
                    Some("auto") => Encoding::Auto,
                    Some("ascii") => Encoding::Ascii,
                    Some("utf8") => Encoding::Utf8,
                    _ => return Err(bad()),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A boolean option as dt_opt_runtime reads it (see `runtime_value`).
fn flag_value(value: Option<&str>) -> Option<bool> {
    runtime_value(value).map(|v| v.is_some())
}

impl Default for Options {
    fn default() -> Options {
        Options {
            quiet: false,
            strsize: string_buffer_bytes(256),
            max_strlen: 256,
            scratchsize: 4096,
            tregs: None,
            pspec: false,
            bufsize: 4 << 20,
            // DTrace's default is 1hz; we drain faster, which costs one
            // system call per interval and makes output timely.
            switchrate: Duration::from_millis(20),
            dynvarsize: 1 << 20,
            destructive: false,
            zdefs: false,
            empty: false,
            errtags: false,
            droptags: false,
            cpp: false,
            cpp_args: Vec::new(),
            libdirs: Vec::new(),
            aggsize: None,
            aggrate: Duration::from_secs(1),
            aggsort: AggSortOptions::default(),
            aggdisplay: AggDisplayOptions::default(),
            // DTrace's defaults (specsize is per CPU there, per speculation here).
            nspec: 1,
            specsize: 32 << 10,
            flowindent: false,
            ustackframes: 100,
            jstackframes: 50,
            stackframes: 20,
            lockmem: None,
            bpflog: false,
            bpflogsize: (16 << 20) - 1,
            maxframes: u32::from(crate::sema::ir::ustack_value::MAX_FRAMES),
            stackindent: 14,
            statusrate: Duration::from_secs(1),
            cpu: None,
            defaultargs: false,
            d_version: (1, 13),
            argref: false,
            rawbytes: false,
            printsize: 8192,
            temporal: false,
            verbose: false,
            cpppath: None,
            child_env: Vec::new(),
            evaltime: EvalTime::default(),
            bufpolicy: BufPolicy::default(),
            bufresize_auto: true,
            nusdtprobes: 256,
            oformat: OutputFormat::Text,
            print_aggregations_at_exit: false,
            metricsfile: None,
            metrics_labels: Vec::new(),
        }
    }
}

/// Every option name DTrace accepts with -x or `#pragma D option`.
const OPTION_NAMES: &[&str] = &[
    "agghist",
    "aggpack",
    "aggpercpu",
    "aggrate",
    "aggsize",
    "aggsortkey",
    "aggsortkeypos",
    "aggsortpos",
    "aggsortrev",
    "aggzoom",
    "amin",
    "argref",
    "bpflog",
    "bpflogsize",
    "bufpolicy",
    "bufresize",
    "bufsize",
    "cleanrate",
    "core",
    "cpp",
    "cppargs",
    "cpphdrs",
    "cpppath",
    "cpu",
    "ctypes",
    "debug",
    "define",
    "defaultargs",
    "destructive",
    "droptags",
    "dtypes",
    "dynvarsize",
    "empty",
    "encoding",
    "errtags",
    "evaltime",
    "flowindent",
    "grabanon",
    "incdir",
    "iregs",
    "jstackframes",
    "jstackstrsize",
    "kdefs",
    "knodefs",
    "late",
    "lazyload",
    "ld_path",
    "ldpath",
    "libdir",
    "linkmode",
    "linktype",
    "lockmem",
    "maxframes",
    "metricsfile",
    "metricslabels",
    "modpath",
    "nolibs",
    "nspec",
    "nusdtprobes",
    "oformat",
    "pgmax",
    "preallocate",
    "printsize",
    "procfs",
    "pspec",
    "quiet",
    "rawbytes",
    "scratchsize",
    "setenv",
    "specsize",
    "stackframes",
    "stackindent",
    "statusrate",
    "stdc",
    "strip",
    "strsize",
    "switchrate",
    "syslibdir",
    "temporal",
    "tree",
    "tregs",
    "udefs",
    "undef",
    "unodefs",
    "unsetenv",
    "ustackframes",
    "verbose",
    "version",
    "zdefs",
];

/// Options of DTrace that this dtrace refuses, and why: each names
/// something Linux or this implementation does not have. Setting one is an
/// error, never a silent no-op.
const REFUSED_OPTIONS: &[(&str, &str)] = &[
    ("aggpercpu", "aggregations are printed combined over all CPUs only"),
    ("amin", "stability attributes are not checked against a minimum"),
    ("core", "no core file is written"),
    ("ctypes", "there are no CTF types to write"),
    ("dtypes", "there are no CTF types to write"),
    ("grabanon", "there is no anonymous tracing on Linux"),
    ("jstackstrsize", "jstack() annotates no Java frames here (it is ustack())"),
    ("ld_path", "-G writes its object without a linker"),
    ("ldpath", "-G writes its object without a linker"),
    ("linkmode", "-G writes its object without a linker"),
    ("modpath", "kernel types come from BTF, not module files"),
    ("pgmax", "grabbed processes are not limited"),
    ("preallocate", "dynamic variables are preallocated by the kernel"),
    ("procfs", "processes are read through /proc always"),
    ("syslibdir", "only the built-in D library is loaded"),
    ("tree", "libdtrace's parse tree dumps do not exist here"),
];

/// dt_opt_runtime's reading of a value: none or a yes-word sets the
/// option, an empty value or a no-word unsets it, a number sets it to that
/// number (0 included). None: not a valid value.
fn runtime_value(value: Option<&str>) -> Option<Option<u64>> {
    const COUPLES: [(&str, &str); 6] = [
        ("yes", "no"),
        ("enable", "disable"),
        ("enabled", "disabled"),
        ("true", "false"),
        ("on", "off"),
        ("set", "unset"),
    ];
    let Some(text) = value else { return Some(Some(1)) };
    if text.is_empty() {
        return Some(None);
    }
    for (yes, no) in COUPLES {
        if text.eq_ignore_ascii_case(yes) {
            return Some(Some(1));
        }
        if text.eq_ignore_ascii_case(no) {
            return Some(None);
        }
    }
    parse_c_number(text).map(Some)
}

/// A number as strtoull(3) with base 0 reads it: decimal, 0x hex, 0 octal.
fn parse_c_number(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

/// Options a D program may not set (dt_options.c's EDT_BADOPTCTX): they
/// shape the preprocessor, the linker, the environment of -c commands and
/// the process's own limits, all settled before a pragma is read.
const COMMAND_LINE_ONLY: &[&str] = &[
    "cppargs", "cpphdrs", "cpppath", "define", "undef", "incdir", "ld_path", "ldpath", "modpath", "setenv", "unsetenv", "stdc",
    "lockmem",
];

impl Options {
    /// `#pragma D option name[=value]`: as set(), but an option only the
    /// command line may set is refused in DTrace's words (after its value
    /// is found missing or superfluous, as dt_opt_cpp_path and
    /// dt_opt_cpp_hdrs check first).
    pub(crate) fn set_from_program(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if COMMAND_LINE_ONLY.contains(&name) {
            let takes_value = !matches!(name, "cpphdrs" | "setenv" | "unsetenv");
            if name == "cpphdrs" && value.is_some() || takes_value && value.is_none() {
                return Err("Invalid value for specified option".to_string());
            }
            return Err("Option cannot be used from within a D program".to_string());
        }
        self.set(name, value)
    }

    /// Applies `name[=value]`, reading the value as DTrace's option table
    /// does for that option; errors read like DTrace's.
    pub(crate) fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if !OPTION_NAMES.contains(&name) {
            return Err("Invalid option name".to_string());
        }
        let bad = || "Invalid value for specified option".to_string();
        if let Some((_, why)) = REFUSED_OPTIONS.iter().find(|(n, _)| *n == name) {
            return Err(format!("Option not supported: {why}"));
        }
        // Compiler flags take no value (dt_opt_cflags).
        let no_value = || if value.is_some() { Err(bad()) } else { Ok(true) };
        // Runtime flags: set, or unset with a no-word.
        let flag = || flag_value(value).ok_or_else(bad);
        let number = || runtime_value(value).ok_or_else(bad).map(|v| v.unwrap_or(0));
        let size = || parse_size(value.ok_or_else(bad)?).ok_or_else(bad);
        let rate = || parse_rate(value.ok_or_else(bad)?).ok_or_else(bad);
        let one_of = |choices: &[&str]| value.filter(|v| choices.contains(v)).ok_or_else(bad);
        match name {
            "quiet" => self.quiet = flag()?,
            "destructive" => self.destructive = flag()?,
            "flowindent" => self.flowindent = flag()?,
            "rawbytes" => self.rawbytes = flag()?,
            "bpflog" => self.bpflog = flag()?,
            "temporal" => self.temporal = flag()?,
            "zdefs" => self.zdefs = no_value()?,
            "empty" => self.empty = no_value()?,
            "errtags" => self.errtags = no_value()?,
            "droptags" => self.droptags = no_value()?,
            "cpp" => self.cpp = no_value()?,
            "defaultargs" => self.defaultargs = no_value()?,
            "argref" => self.argref = no_value()?,
            "verbose" => self.verbose = no_value()?,
            // What these ask for is how this dtrace always works: symbols
            // resolve at compile time (an unknown one is an error), no
            // library directories are read, -G's object has no debugging
            // data to strip nor DOF to load lazily, descriptions parse one way.
            "kdefs" | "knodefs" | "udefs" | "unodefs" | "nolibs" | "strip" | "lazyload" => {
                no_value()?;
            }
            "pspec" => self.pspec = no_value()?,
            // What each stage does, on stderr (debug_line!).
            "debug" => {
                no_value()?;
                crate::start_debugging();
            }
            // -H's option form: cpp names each file it includes.
            "cpphdrs" => {
                no_value()?;
                if !self.cpp_args.iter().any(|a| a == "-H") {
                    self.cpp_args.push("-H".to_string());
                }
            }
            // Oracle's: more arguments for cpp, split at blanks.
            "cppargs" => self.cpp_args.extend(value.ok_or_else(bad)?.split_whitespace().map(String::from)),
            // The registers the code generator may use, at most DIF's
            // eight: a program needs all eight (as dtrace-utils, which
            // refuses fewer, and more than there are).
            "iregs" => match number()? {
                n if n > 8 => return Err(bad()),
                n if n < 8 => return Err("Insufficient registers to generate code".to_string()),
                _ => {}
            },
            "tregs" => self.tregs = Some(number()? as usize),
            // -x forms of -C, -D, -I and -U.
            "define" | "incdir" | "undef" => {
                let flag = match name {
                    "define" => "-D",
                    "incdir" => "-I",
                    _ => "-U",
                };
                self.cpp_args.push(format!("{flag}{}", value.ok_or_else(bad)?));
            }
            "libdir" => self.libdirs.push(value.filter(|v| !v.is_empty()).ok_or_else(bad)?.into()),
            "cpppath" => self.cpppath = Some(value.filter(|v| !v.is_empty()).ok_or_else(bad)?.to_string()),
            // The C dialect cpp preprocesses (-X): K&R C (s) has no
            // __STDC__ (GNU cpp's -traditional); the ISO modes (a, c, t)
            // define it, as GNU cpp always does (to 1).
            "stdc" => {
                let mode = one_of(&["a", "c", "s", "t"])?;
                self.cpp_args.retain(|a| a != "-traditional");
                if mode == "s" {
                    self.cpp_args.push("-traditional".to_string());
                }
            }
            // Translators are always applied at compile time.
            "late" => {
                one_of(&["dynamic", "static"])?;
            }
            "evaltime" => {
                self.evaltime = match one_of(&["exec", "preinit", "postinit", "main"])? {
                    "exec" => EvalTime::Exec,
                    "preinit" => EvalTime::Preinit,
                    "postinit" => EvalTime::Postinit,
                    _ => EvalTime::Main,
                }
            }
            // -G writes an ELF object.
            "linktype" => {
                if value != Some("elf") {
                    return Err(format!("{}: -G writes ELF objects only", bad()));
                }
            }
            "version" => {
                let v = value.ok_or_else(bad)?;
                let known = ["1.0", "1.1", "1.2", "1.2.1", "1.2.2", "1.3", "1.4", "1.4.1", "1.5", "1.6", "1.6.1"];
                let later = (7..=13).any(|minor| v == format!("1.{minor}"));
                if !known.contains(&v) && !later {
                    // dt_version_str2num: up to three numbers (major at
                    // most 255, the others 4095) is a version, if not one
                    // this compiler defines.
                    let fields: Vec<&str> = v.split('.').collect();
                    let well_formed = fields.len() <= 3
                        && fields.iter().enumerate().all(|(i, f)| {
                            !f.is_empty()
                                && f.bytes().all(|b| b.is_ascii_digit())
                                && f.parse::<u32>().is_ok_and(|n| n <= if i == 0 { 0xff } else { 0xfff })
                        });
                    return Err(if well_formed {
                        "Requested version is not supported by compiler"
                    } else {
                        "Version is not properly formatted or is too large"
                    }
                    .to_string());
                }
                let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
                self.d_version = (parts.next().unwrap_or(1), parts.next().unwrap_or(0));
            }
            "setenv" => {
                let (var, val) = value.and_then(|v| v.split_once('=')).ok_or_else(bad)?;
                self.child_env.push((var.to_string(), Some(val.to_string())));
            }
            "unsetenv" => self.child_env.push((value.filter(|v| !v.is_empty()).ok_or_else(bad)?.to_string(), None)),
            "strsize" => {
                let v = size()?;
                if !(2..=65536).contains(&v) {
                    return Err(bad());
                }
                self.max_strlen = v as usize;
                self.strsize = string_buffer_bytes(v as usize);
            }
            // The clauses' alloca() regions share one per-CPU scratch value
            // of at most 32 KB with the string temporaries.
            "scratchsize" => {
                let v = size()?;
                if !(8..=16384).contains(&v) {
                    return Err(bad());
                }
                self.scratchsize = v as usize;
            }
            "bufsize" => self.bufsize = size()?,
            "printsize" => self.printsize = size()? as usize,
            "dynvarsize" => self.dynvarsize = size()?,
            "aggsize" => self.aggsize = Some(size()?),
            "specsize" => self.specsize = size()?,
            "switchrate" => self.switchrate = rate()?,
            "aggrate" => self.aggrate = rate()?,
            "statusrate" => self.statusrate = rate()?,
            // Dynamic variables are freed the moment they are assigned 0:
            // there is no cleaning to pace. The value is checked all the same.
            "cleanrate" => {
                rate()?;
            }
            // The ring buffer is drained as it fills (DTrace's "switch");
            // "fill" and "ring" are kept by the consumer (consume::Fill,
            // consume::RingPolicy).
            "bufpolicy" => {
                self.bufpolicy = match one_of(&["fill", "switch", "ring"])? {
                    "switch" => BufPolicy::Switch,
                    "fill" => BufPolicy::Fill,
                    _ => BufPolicy::Ring,
                }
            }
            "nusdtprobes" => self.nusdtprobes = u32::try_from(number()?).ok().filter(|n| *n > 0).ok_or_else(bad)?,
            "bufresize" => self.bufresize_auto = one_of(&["auto", "manual"])? == "auto",
            "nspec" => {
                let v = number()?;
                // A speculation's tag keeps its ID below SPEC_TAG_STEP.
                let limit = u64::from(crate::defs::layout::SPEC_TAG_STEP);
                self.nspec = u32::try_from(v).ok().filter(|_| v < limit).ok_or_else(bad)?;
            }
            "stackframes" => self.stackframes = frames(number()?).ok_or_else(bad)?,
            // The kernel takes a log of 128 bytes up to 1 GB.
            "bpflogsize" => {
                self.bpflogsize = u32::try_from(size()?).ok().filter(|v| (128..1 << 30).contains(v)).ok_or_else(bad)?
            }
            "lockmem" => {
                self.lockmem = Some(if value == Some("unlimited") { u64::MAX } else { size()? });
            }
            "maxframes" => self.maxframes = frames(number()?).ok_or_else(bad)?,
            "ustackframes" => self.ustackframes = frames(number()?).ok_or_else(bad)?,
            "jstackframes" => self.jstackframes = frames(number()?).ok_or_else(bad)?,
            "stackindent" => {
                self.stackindent = usize::try_from(number()?).ok().filter(|v| *v <= 1024).ok_or_else(bad)?
            }
            "cpu" => {
                self.cpu = match runtime_value(value).ok_or_else(bad)? {
                    Some(cpu) => Some(u32::try_from(cpu).map_err(|_| bad())?),
                    None => None,
                }
            }
            "oformat" => {
                self.oformat = match value.ok_or_else(bad)? {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    "xml" | "html" => {
                        return Err("Invalid value for specified option: only text and json are supported".to_string())
                    }
                    _ => return Err(bad()),
                };
            }
            "metricsfile" => {
                let path = value.filter(|v| !v.is_empty()).ok_or_else(bad)?;
                self.metricsfile = Some(path.to_string());
            }
            "metricslabels" => self.metrics_labels.push(parse_metrics_labels(value.ok_or_else(bad)?).ok_or_else(bad)?),
            "agghist" | "aggpack" | "aggzoom" | "encoding" => {
                self.aggdisplay.set(name, value)?;
            }
            "aggsortkey" | "aggsortkeypos" | "aggsortpos" | "aggsortrev" => {
                self.aggsort.set(name, value)?;
            }
            _ => return Err(format!("internal error: option {name} has no meaning assigned")),
        }
        Ok(())
    }
}

/// `name:label,label,...` (`:label,...` for the anonymous aggregation):
/// each label a Prometheus label name, not one of the reserved `le` or `__*`.
fn parse_metrics_labels(text: &str) -> Option<(String, Vec<String>)> {
    let (name, labels) = text.split_once(':')?;
    let name = name.strip_prefix('@').unwrap_or(name);
    let labels: Vec<String> = labels.split(',').map(str::to_string).collect();
    let valid = |l: &String| {
        let mut chars = l.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && l != "le"
            && !l.starts_with("__")
    };
    labels.iter().all(valid).then(|| (name.to_string(), labels))
}

/// `4m`, `256k`, `1g`, `512`.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let (digits, mult) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (text, 1),
        Some((i, _)) => {
            let mult = match text[i..].to_ascii_lowercase().as_str() {
                "k" => 1 << 10,
                "m" => 1 << 20,
                "g" => 1 << 30,
                "t" => 1 << 40,
                _ => return None,
            };
            (&text[..i], mult)
        }
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// A rate (`10hz`, default unit hz) or an interval (`100ms`, `1s`).
pub(crate) fn parse_rate(text: &str) -> Option<Duration> {
    let i = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let n: u64 = text[..i].parse().ok()?;
    if n == 0 {
        return None;
    }
    let ns = match &text[i..] {
        "" | "hz" => 1_000_000_000 / n,
        "ns" | "nsec" => n,
        "us" | "usec" => n * 1_000,
        "ms" | "msec" => n * 1_000_000,
        "s" | "sec" => n * 1_000_000_000,
        "m" | "min" => n * 60_000_000_000,
        _ => return None,
    };
    Some(Duration::from_nanos(ns))
}

pub(crate) fn command() -> Command {
    let append = |id: &'static str, short: char, value: &'static str, help: &'static str| {
        Arg::new(id).short(short).value_name(value).action(ArgAction::Append).help(help)
    };
    let flag = |id: &'static str, short: char, help: &'static str| {
        Arg::new(id).short(short).action(ArgAction::SetTrue).help(help)
    };
    Command::new("dtrace")
        .about("DTrace for Linux: dynamic tracing with D scripts on eBPF")
        // getopt takes an option again: a flag stays set, the last value wins.
        .args_override_self(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .override_usage(
            "dtrace [-32|-64] [-CeFGhHOqlSvVwZ] [-b bufsz] [-X a|c|s|t] [-c cmd] [-p pid] [-D name[=def]] [-I path] [-L path] [-U name] [-x opt[=val]] [-o output] [-s script] [-n name] [-P provider] [-m module] [-f function] [-i probe-id] [args ...]",
        )
        .arg(append("name", 'n', "name", "enable or list probes matching the specified probe name"))
        .arg(append("script", 's', "script", "enable or list probes for the specified D script"))
        .arg(append("provider", 'P', "provider", "enable or list probes matching the specified provider name"))
        .arg(append("module", 'm', "module", "enable or list probes matching the specified module name"))
        .arg(append("function", 'f', "function", "enable or list probes matching the specified function name"))
        .arg(append("id", 'i', "probe-id", "enable or list probes matching the specified probe id"))
        .arg(append("option", 'x', "opt[=val]", "enable or modify compiler and tracing options"))
        .arg(append("bufsize", 'b', "bufsz", "set trace buffer size (as -x bufsize=bufsz)"))
        .arg(append("stdc", 'X', "a|c|s|t", "specify ISO C conformance settings for preprocessor (as -x stdc)"))
        .arg(append("command", 'c', "cmd", "run specified command and exit upon its completion"))
        .arg(append("pid", 'p', "pid", "grab specified process-ID and cache its symbol tables"))
        .arg(flag("flowindent", 'F', "coalesce trace output by function"))
        .arg(flag("show", 'S', "print the generated BPF programs"))
        .arg(flag("elf", 'G', "generate an ELF file defining the USDT probes of the -s provider definitions"))
        .arg(flag("header", 'h', "generate a header file with definitions for static probes"))
        .arg(flag("cpp", 'C', "run the C preprocessor over D scripts before compiling them"))
        .arg(flag("includes", 'H', "print the pathnames of included files when invoking cpp (with -C)"))
        .arg(append("define", 'D', "name[=def]", "define a name for the preprocessor (with -C)"))
        .arg(append("undef", 'U', "name", "undefine a name for the preprocessor (with -C)"))
        .arg(append("include", 'I', "path", "add a directory to the preprocessor's search path (with -C)"))
        .arg(append("libdir", 'L', "path", "add a directory of D library files, loaded before the program"))
        .arg(Arg::new("output").short('o').value_name("output").help("set output file"))
        .arg(flag("quiet", 'q', "set quiet mode (only output explicitly traced data)"))
        .arg(flag("print-at-exit", 'O', "print the aggregations at exit (with -x oformat=json)"))
        .arg(flag("list", 'l', "list probes matching specified criteria"))
        .arg(flag("verbose", 'v', "set verbose mode: with -l, show probe attributes and argument types"))
        .arg(flag("exit", 'e', "exit after compiling request but prior to enabling probes"))
        .arg(flag("destructive", 'w', "permit destructive actions"))
        .arg(flag("zero", 'Z', "permit probe descriptions that match zero probes"))
        .arg(flag("version", 'V', "report DTrace API version"))
        .arg(Arg::new("help").long("help").action(ArgAction::Help).help("print this help"))
        // Operands may come between options, as getopt in a loop takes them
        // in DTrace (`dtrace -s x.d arg -c cmd`).
        .arg(Arg::new("args").action(ArgAction::Append).num_args(0..).allow_negative_numbers(true))
}

/// A -P/-m/-f/-i argument's name and the predicate or actions after it.
pub(crate) fn split_clause(given: &str) -> (&str, &str) {
    given.split_at(given.find(['{', '/']).unwrap_or(given.len()))
}

/// The probe an -i operand names (its digits, before any clause), or why
/// it names none, in Oracle's dtrace's words: `0` is an unknown
/// identifier; text after the digits (`4-2`) or without digits (`-3`) is
/// a probe name that matches nothing.
pub(crate) fn probe_id(given: &str, exists: impl Fn(u32) -> bool) -> Result<u32, String> {
    let text = split_clause(given).0.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, rest) = text.split_at(digits);
    let no_match = |name: &str| format!("probe description :::{name} does not match any probes");
    let Ok(id) = number.parse::<u32>() else { return Err(no_match(text)) };
    if id == 0 || (rest.is_empty() && !exists(id)) {
        return Err(format!("invalid probe identifier {id}: Unknown probe identifier"));
    }
    if !rest.is_empty() {
        return Err(no_match(rest));
    }
    Ok(id)
}

/// A probe ID written in digits, as D's lexer takes it (dt_node_pdesc_by_id).
pub(crate) fn probe_id_number(digits: &str) -> Result<u32, String> {
    digits.parse::<u32>().map_err(|_| format!("identifier {digits} exceeds maximum probe id"))
}

/// The description -P (field 0), -m (1) or -f (2) makes of `given`: its
/// fields end at that field (`-f vmlinux:vfs_read` is `:vmlinux:vfs_read:`);
/// more fields than that are DTrace's "Overspecified probe description".
/// As dtrace_xstr2desc reads from the right, an empty first field is never
/// reached (`-f ::read:` is `:read::`). Digits first are a probe ID to D's
/// lexer (dt_node_pdesc_by_id), which only a probe name may be.
fn field_desc(given: &str, field: usize) -> Result<String, String> {
    const SPECIFYING: [&str; 3] = ["providers", "modules", "functions"];
    let digits = given.find(|c: char| !c.is_ascii_digit()).unwrap_or(given.len());
    if digits > 0 {
        let id = probe_id_number(&given[..digits])?;
        return Err(format!("probe identifier {id} not permitted when specifying {}", SPECIFYING[field]));
    }
    let mut parts: Vec<&str> = given.split(':').collect();
    if parts.len() > 1 && parts[0].is_empty() {
        parts.remove(0);
    }
    if parts.len() > field + 1 {
        return Err(format!("invalid probe description \"{given}\": Overspecified probe description"));
    }
    let mut fields = vec![""; 4];
    fields[field + 1 - parts.len()..=field].copy_from_slice(&parts);
    Ok(fields.join(":"))
}

/// A stack depth option's value: 1 up to the deepest stack the kernel
/// records (perf_event_max_stack), as Oracle's dtrace checks it.
fn frames(value: u64) -> Option<u32> {
    let kernel_max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(127);
    u32::try_from(value).ok().filter(|v| *v > 0 && u64::from(*v) <= kernel_max)
}

/// Parses the command line; `Err` carries clap's error for a usage message.
pub(crate) fn parse(mut argv: Vec<String>) -> Result<Flags, clap::Error> {
    // -32 and -64 are not single letters; getopt-style parsing cannot take them.
    let mut data_model_32 = false;
    argv.retain(|a| match a.as_str() {
        "-32" => {
            data_model_32 = true;
            false
        }
        "-64" => false,
        _ => true,
    });
    let m = command().try_get_matches_from(argv)?;
    // -n, -s and friends keep their command-line order, as dtrace compiles
    // them in that order.
    let mut indexed: Vec<(usize, ProgramSource)> = Vec::new();
    let mut collect = |id: &str, make: &dyn Fn(&str) -> ProgramSource| {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            for (v, i) in values.zip(indices) {
                indexed.push((i, make(v)));
            }
        }
    };
    collect("name", &|v| ProgramSource::Description(v.to_string()));
    collect("script", &|v| ProgramSource::Script(v.to_string()));
    // A predicate or actions may follow the name (`-P dtrace'{ ... }'`,
    // `-i '1{ ... }'`): the clause is the probe description with them.
    let with_clause = |desc: Result<String, String>, rest: &str| desc.map(|d| format!("{d}{rest}"));
    for (id, field) in [("provider", 0), ("module", 1), ("function", 2)] {
        collect(id, &|v| {
            let (name, rest) = split_clause(v);
            ProgramSource::Probe { desc: with_clause(field_desc(name, field), rest), given: v.to_string() }
        });
    }
    collect("id", &|v| {
        let (id, rest) = split_clause(v);
        ProgramSource::Probe { desc: Ok(format!("#{id}{rest}")), given: v.to_string() }
    });
    indexed.sort_by_key(|(i, _)| *i);
    let mut targets: Vec<(usize, TargetSpec)> = Vec::new();
    for (id, make) in [("command", TargetSpec::Command as fn(String) -> TargetSpec), ("pid", TargetSpec::Pid)] {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            targets.extend(indices.zip(values).map(|(i, v)| (i, make(v.clone()))));
        }
    }
    targets.sort_by_key(|(i, _)| *i);
    let generate = match (m.get_flag("header"), m.get_flag("elf")) {
        (true, _) => Some(Generate::Header),
        (false, true) => Some(Generate::Object),
        (false, false) => None,
    };
    let unsupported = if m.get_flag("header") && m.get_flag("elf") {
        Some("-h and -G may not be used together")
    } else if data_model_32 {
        Some("-32 is not supported: only the 64-bit data model is available")
    } else {
        None
    };

    let mut options = Options::default();
    let mut option_args = Vec::new();
    // -b and -x keep their command-line order: the last setting wins.
    let mut ordered: Vec<(usize, String)> = Vec::new();
    for (id, prefix) in [("option", ""), ("bufsize", "bufsize="), ("stdc", "stdc=")] {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            ordered.extend(indices.zip(values).map(|(i, v)| (i, format!("{prefix}{v}"))));
        }
    }
    ordered.sort_by_key(|(i, _)| *i);
    option_args.extend(ordered.into_iter().map(|(_, v)| v));
    options.quiet = m.get_flag("quiet");
    options.destructive = m.get_flag("destructive");
    options.cpp = m.get_flag("cpp");
    options.flowindent = m.get_flag("flowindent");
    options.print_aggregations_at_exit = m.get_flag("print-at-exit");
    // -D, -U and -I reach cpp in command-line order.
    let mut cpp_args: Vec<(usize, String)> = Vec::new();
    for (id, prefix) in [("define", "-D"), ("undef", "-U"), ("include", "-I")] {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            cpp_args.extend(indices.zip(values).map(|(i, v)| (i, format!("{prefix}{v}"))));
        }
    }
    cpp_args.sort_by_key(|(i, _)| *i);
    options.cpp_args = cpp_args.into_iter().map(|(_, a)| a).collect();
    if m.get_flag("includes") {
        options.cpp_args.push("-H".to_string());
    }
    options.libdirs.extend(m.get_many::<String>("libdir").into_iter().flatten().map(std::path::PathBuf::from));
    let mut flags = Flags {
        sources: indexed.into_iter().map(|(_, s)| s).collect(),
        args: m.get_many::<String>("args").map(|v| v.cloned().collect()).unwrap_or_default(),
        list: m.get_flag("list"),
        verbose: m.get_flag("verbose"),
        compile_only: m.get_flag("exit"),
        output: m.get_one::<String>("output").cloned(),
        zero_matches_ok: m.get_flag("zero"),
        version: m.get_flag("version"),
        targets: targets.into_iter().map(|(_, t)| t).collect(),
        show_programs: m.get_flag("show"),
        generate,
        unsupported,
        options,
    };
    for opt in option_args {
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (opt.clone(), None),
        };
        if let Err(why) = flags.options.set(&name, value.as_deref()) {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                // As dtrace(1): the name alone (its value was cut at the =).
                format!("failed to set -x {name}: {why}"),
            ));
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        std::iter::once("dtrace").chain(args.iter().copied()).map(String::from).collect()
    }

    #[test]
    fn flags_keep_program_order() {
        let f = parse(argv(&["-n", "BEGIN", "-s", "x.d", "-n", "END"])).unwrap();
        assert_eq!(
            f.sources,
            vec![
                ProgramSource::Description("BEGIN".into()),
                ProgramSource::Script("x.d".into()),
                ProgramSource::Description("END".into())
            ]
        );
    }

    #[test]
    fn flags_cluster_like_getopt() {
        let f = parse(argv(&["-qs", "./write_timing.d", "2sec"])).unwrap();
        assert!(f.options.quiet);
        assert_eq!(f.sources, vec![ProgramSource::Script("./write_timing.d".into())]);
        assert_eq!(f.args, vec!["2sec".to_string()]);
    }

    #[test]
    fn flags_x_options_are_checked() {
        let f = parse(argv(&["-x", "strsize=32", "-x", "quiet", "-n", "BEGIN"])).unwrap();
        assert_eq!((f.options.max_strlen, f.options.strsize), (32, 40));
        assert!(f.options.quiet);
        let e = parse(argv(&["-x", "nosuch=1", "-n", "BEGIN"])).unwrap_err();
        assert!(e.to_string().contains("failed to set -x nosuch: Invalid option name"));
        assert!(parse(argv(&["-x", "bufsize=lots", "-n", "BEGIN"])).is_err());
        let f = parse(argv(&["-x", "nspec=4", "-x", "specsize=1k", "-n", "BEGIN"])).unwrap();
        assert_eq!((f.options.nspec, f.options.specsize), (4, 1024));
        assert_eq!((Options::default().nspec, Options::default().specsize), (1, 32 << 10));
        assert!(parse(argv(&["-x", "nspec=65536", "-n", "BEGIN"])).is_err());
    }

    #[test]
    fn targets_keep_order_and_data_models_parse() {
        let f = parse(argv(&["-c", "ls -l", "-p", "42", "-64", "-F", "-n", "BEGIN"])).unwrap();
        assert_eq!(f.targets, vec![TargetSpec::Command("ls -l".into()), TargetSpec::Pid("42".into())]);
        assert!(f.options.flowindent && f.unsupported.is_none());
        assert!(parse(argv(&["-32", "-n", "BEGIN"])).unwrap().unsupported.is_some());
        assert_eq!(parse(argv(&["-G", "-s", "x.d"])).unwrap().generate, Some(Generate::Object));
        assert_eq!(parse(argv(&["-h", "-s", "x.d"])).unwrap().generate, Some(Generate::Header));
    }

    #[test]
    fn man_page_names_every_option() {
        let man = include_str!("../man/dtrace.1");
        for name in OPTION_NAMES {
            assert!(
                [".BR {} ,", ".BR {} .", ".BR {}\n", ".B {}\n"]
                    .iter()
                    .any(|form| man.contains(&form.replace("{}", name))),
                "man/dtrace.1 does not say what -x {name} does"
            );
        }
    }

    #[test]
    fn sizes_and_rates_parse() {
        assert_eq!(parse_size("4m"), Some(4 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("2x"), None);
        assert_eq!(parse_rate("10hz"), Some(Duration::from_millis(100)));
        assert_eq!(parse_rate("5ms"), Some(Duration::from_millis(5)));
    }
}
