//! The one ordered list of compiler passes: read each program source, parse
//! it, apply its pragmas, type-check all sources into one typed program,
//! then generate its BPF programs. Stops at the first error and formats it
//! as dtrace(1) does. Nothing here needs privileges or touches the kernel
//! (beyond reading its BTF), so `dtrace -e` reports every error a script
//! can have before it is enabled.

use crate::codegen::{self, Generated};
use crate::diag::CompileError;
use crate::flags::{Options, ProgramSource};
use crate::provider::Registry;
use crate::sema::check::{is_type_name, CheckOptions, Checker};
use crate::sema::ir::Program;
use crate::syntax::{self, ast};

pub(crate) struct Compiled {
    pub program: Program,
    /// The BPF programs of the enabled probes.
    pub generated: Generated,
    /// For each source: how dtrace names it ("description 'BEGIN '",
    /// "script 'x.d'") and how many probes it matched.
    pub matches: Vec<(String, usize)>,
    /// The provider definitions of the sources, each with its source's
    /// text (for `dtrace -h` and `-G`).
    pub providers: Vec<(ast::ProviderDef, String)>,
}

/// A source read and parsed, with what error messages need to know.
struct Parsed {
    text: String,
    ast: ast::Program,
    kind: ProgramSource,
}

/// What the command line tells the compiler besides options.
pub(crate) struct Context {
    /// -Z: descriptions may match no probes.
    pub zero_matches_ok: bool,
    /// `$target`: the pid of the -c or -p process.
    pub target_pid: Option<u32>,
    /// Whether the kernel lets tracing programs keep thread-local variables
    /// in task-local storage; asked only of scripts that have some.
    pub task_storage: fn() -> bool,
    /// Whether tracing programs may call bpf_loop() (Linux 5.17 on);
    /// asked only of scripts that chill().
    pub bpf_loop: fn() -> bool,
}

/// Compiles every source. `macro_args[0]` is `$0`.
pub(crate) fn compile(
    sources: &[ProgramSource],
    macro_args: &[String],
    options: &mut Options,
    registry: &mut Registry,
    context: Context,
) -> Result<Compiled, String> {
    let mut library = parse_library(registry)?;
    let mut library_types = typedef_names(&library);
    library.extend(user_libraries(&options.libdirs, registry, &mut library_types)?);
    let is_type = |name: &str| is_type_name(name) || library_types.contains(name);
    let mut parsed = Vec::new();
    for source in sources {
        let text = match source {
            ProgramSource::Script(path) => {
                let text = read_script(path)?;
                if options.cpp {
                    preprocess(&text, path, &options.cpp_args, options.cpppath.as_deref())?
                } else {
                    text
                }
            }
            // Digits are a probe ID to D's lexer (dt_node_pdesc_by_id):
            // `dtrace -n 1` enables BEGIN.
            ProgramSource::Description(text) => match probe_by_id(text, registry) {
                Some(found) => found.map_err(|why| format!("invalid probe specifier {text}: {why}"))?,
                None => text.clone(),
            },
            // -i: the probe of that ID, by its full description.
            ProgramSource::Probe { desc: Ok(desc), given } if desc.starts_with('#') => {
                let rest = crate::flags::split_clause(given).1;
                let id = crate::flags::probe_id(given, |id| registry.get(id).is_some())
                    .map_err(|why| format!("invalid probe specifier {given}: {why}"))?;
                match registry.get(id) {
                    Some(p) => format!("{}{rest}", p.full_name()),
                    None => return Err(format!("invalid probe specifier {given}: invalid probe identifier {id}")),
                }
            }
            ProgramSource::Probe { desc: Ok(desc), .. } => desc.clone(),
            ProgramSource::Probe { desc: Err(why), given } => {
                return Err(format!("invalid probe specifier {given}: {why}"));
            }
        };
        let parsed_ast = match source {
            ProgramSource::Script(_) => syntax::parse_script(&text, &is_type, options.pspec),
            _ => syntax::parse(&text, &is_type),
        };
        let ast = parsed_ast.map_err(|e| {
            // DTrace's lexer acts on a #pragma line as it reads it: a bad
            // one before the syntax error is what it reports.
            // The options those pragmas set (errtags) apply to the error.
            let (pragma_error, set) = pragma_error_before(&text, e.span.start, options);
            let error = pragma_error.unwrap_or(CompileError { tag: e.tag, message: e.message, span: Some(e.span) });
            format_error(source, &text, &error, "", set.errtags)
        })?;
        for item in &ast.items {
            if let ast::Item::Pragma { words, span } = item {
                apply_pragma(words, options).map_err(|(tag, m)| {
                    format_error(source, &text, &CompileError::new(tag, span, m), "", options.errtags)
                })?;
            }
        }
        // DTrace's lexer replaces macro arguments as it meets them: one
        // not given is an error before anything else is checked.
        if !options.defaultargs {
            if let Some((n, string, span)) = ast.macro_args.iter().find(|(n, ..)| *n as usize >= macro_args.len()) {
                let name = format!("{}{n}", if *string { "$$" } else { "$" });
                let e = CompileError::new("D_MACRO_UNDEF", span, format!("macro argument {name} is not defined"));
                return Err(format_error(source, &text, &e, "", options.errtags));
            }
        }
        parsed.push(Parsed { text, ast, kind: source.clone() });
    }

    let mut checker = Checker::new(
        CheckOptions {
            macro_args,
            // zdefs is -Z's option form, and may come from a #pragma.
            zero_matches_ok: context.zero_matches_ok || options.zdefs,
            strsize: options.strsize,
            max_strlen: options.max_strlen,
            target_pid: context.target_pid,
            defaultargs: options.defaultargs,
            stackframes: options.stackframes,
            ustackframes: options.ustackframes,
            jstackframes: options.jstackframes,
            maxframes: options.maxframes,
            scratchsize: options.scratchsize,
            tregs: options.tregs,
            empty: options.empty,
            d_version: options.d_version,
        },
        registry,
    );
    checker.load_library(&library).map_err(|e| format!("failed to load the D library: {}", e.message))?;
    let mut matches = Vec::new();
    for p in &parsed {
        let before = checker.matched;
        let errtags = options.errtags;
        checker.check_items(&p.ast, &p.text).map_err(|e| {
            let e = CompileError { span: e.span.as_ref().map(|s| p.ast.reported_at(s)), ..e };
            format_error(&p.kind, &p.text, &e, checker.region, errtags)
        })?;
        matches.push((notice_name(&p.kind), checker.matched - before));
    }
    // dt_compile: an argument no program references is an error unless -x
    // argref allows it; it is reported against the first program, which
    // dtrace compiles first. The last such argument is named, as Oracle's
    // dtrace names it (dtrace-util/tst.InvalidTraceID6: `-i 1 2 3 4`).
    if !options.argref {
        if let Some(n) = (1..macro_args.len() as u32).rev().find(|n| !checker.macro_args_used.contains(n)) {
            let error = CompileError {
                tag: "D_MACRO_UNUSED",
                message: format!("extraneous argument '{}' (${n} is not referenced)", macro_args[n as usize]),
                span: None,
            };
            return Err(match parsed.first() {
                Some(first) => format_error(&first.kind, &first.text, &error, "", options.errtags),
                None => error.message,
            });
        }
    }
    let program = checker.finish();
    let target = codegen::Target {
        error_probe_id: registry.id_of("dtrace", "ERROR"),
        // sched:::on-cpu and the like: the generated code then reads the
        // thread's identity from the probe context.
        other_thread_probes: program
            .clauses
            .iter()
            .flat_map(|c| &c.probes)
            .any(|id| registry.fires_for_another_thread(*id)),
        task_storage: !program.thread_locals.is_empty() && (context.task_storage)(),
        bpf_loop: (program.uses_chill || program.uses_json) && (context.bpf_loop)(),
        specsize: options.specsize,
        record_timestamps: options.oformat == crate::flags::OutputFormat::Json || options.temporal,
        bufsize: options.bufsize,
        aggsize: options.aggsize,
        dynvarsize: options.dynvarsize,
        probe_name: &|id| registry.get(id).map_or_else(|| format!("probe ID {id}"), |p| p.full_name()),
    };
    let generated = codegen::generate(&program, &target).map_err(|e| {
        // Code generation sees the whole program: the error is the script's.
        // DTrace tags running out of code generation resources (its DIF
        // registers; here the BPF stack, scratch, limits) D_NOREG.
        let error = CompileError { tag: "D_NOREG", message: e.0, span: None };
        match parsed.last() {
            Some(last) => format_error(&last.kind, &last.text, &error, "", options.errtags),
            None => error.message,
        }
    })?;
    let providers = parsed
        .iter()
        .flat_map(|p| {
            p.ast.items.iter().filter_map(|item| match item {
                ast::Item::Provider(def) => Some((def.clone(), p.text.clone())),
                _ => None,
            })
        })
        .collect();
    Ok(Compiled { program, generated, matches, providers })
}

/// `src` compiled as `dtrace -n src` would, with default options: for
/// tests of the front end.
#[cfg(test)]
pub(crate) fn compile_description(src: &str) -> Result<crate::sema::ir::Program, String> {
    compile_for_test(src).map(|c| c.program)
}

/// `src` compiled as `dtrace -n src` would, with default options, through
/// code generation: for tests of the code generator.
#[cfg(test)]
pub(crate) fn compile_for_test(src: &str) -> Result<Compiled, String> {
    compile_for_test_with(src, || false)
}

/// `compile_for_test` for a kernel whose tracing programs may (`|| true`)
/// keep thread-locals in task-local storage.
#[cfg(test)]
pub(crate) fn compile_for_test_with(src: &str, task_storage: fn() -> bool) -> Result<Compiled, String> {
    let mut options = crate::flags::Options::default();
    let mut registry = crate::provider::Registry::new();
    let sources = [crate::flags::ProgramSource::Description(src.to_string())];
    compile(
        &sources,
        &["dtrace".to_string()],
        &mut options,
        &mut registry,
        Context { zero_matches_ok: false, target_pid: None, task_storage, bpf_loop: || false },
    )
}

/// The D library files every script sees whatever its providers:
/// psinfo_t and lwpsinfo_t (curpsinfo, curlwpsinfo), errno and signal names,
/// the CPUs, the subroutines written in D, and the names of uregs[]' words.
const CORE_LIBRARY: &[(&str, &str)] = &[
    ("procfs.d", include_str!("../d-library/procfs.d")),
    ("errno.d", include_str!("../d-library/errno.d")),
    ("signal.d", include_str!("../d-library/signal.d")),
    ("sched.d", include_str!("../d-library/sched.d")),
    ("subr.d", include_str!("../d-library/subr.d")),
    #[cfg(target_arch = "aarch64")]
    ("regs.d", include_str!("../d-library/regs-aarch64.d")),
    #[cfg(not(target_arch = "aarch64"))]
    ("regs.d", include_str!("../d-library/regs-x86_64.d")),
];

/// The D library files every script sees (`d-library/*.d`, built in): the
/// core ones and each provider's.
pub(crate) fn parse_library(registry: &Registry) -> Result<Vec<(String, ast::Program)>, String> {
    CORE_LIBRARY
        .iter()
        .copied()
        .chain(registry.library())
        .map(|(name, text)| {
            let program = syntax::parse(text, &is_type_name)
                .map_err(|e| format!("failed to parse the D library file {name}: {}", e.message))?;
            Ok((name.to_string(), program))
        })
        .collect()
}

/// The error of the first `#pragma` line before `offset` that DTrace
/// would refuse, if any, and the options the pragmas before it set (on a
/// copy: DTrace's lexer acts on each as it reads it).
fn pragma_error_before(text: &str, offset: usize, options: &Options) -> (Option<CompileError>, Options) {
    let mut copy = options.clone();
    let mut at = 0;
    for line in text[..offset.min(text.len())].split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(rest) = line.trim_start().strip_prefix("#pragma") else { continue };
        let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        if let Err((tag, message)) = apply_pragma(&words, &mut copy) {
            return (Some(CompileError::new(tag, &(start..start + line.trim_end().len()), message)), copy);
        }
    }
    (None, copy)
}

/// The typedef names libraries declare (the parser must know type names).
fn typedef_names(library: &[(String, ast::Program)]) -> std::collections::HashSet<String> {
    library
        .iter()
        .flat_map(|(_, program)| &program.items)
        .filter_map(|item| match item {
            ast::Item::Decl(d) if d.class == Some(ast::StorageClass::Typedef) => Some(&d.declarators),
            _ => None,
        })
        .flatten()
        .filter_map(|d| d.name.clone())
        .collect()
}

/// The D library files in the libdir directories (-L, -x libdir), as
/// dt_load_libs_dir loads them: every `*.d` file of each directory (a
/// missing directory is skipped), in the order their `#pragma D depends_on
/// library NAME` lines ask, a cycle being an error ("Cyclic dependency
/// detected: A => B"), as is a dependency on a library none of the
/// directories has. A library that depends on a provider this dtrace does
/// not have is skipped, as DTrace skips what D_PRAGMA_DEPEND refuses, and
/// so is one that depends on a skipped one. `types` gains their typedef
/// names.
pub(crate) fn user_libraries(
    dirs: &[std::path::PathBuf],
    registry: &Registry,
    types: &mut std::collections::HashSet<String>,
) -> Result<Vec<(String, ast::Program)>, String> {
    struct Lib {
        path: std::path::PathBuf,
        text: String,
        /// Indices of the libraries it depends on.
        deps: Vec<usize>,
        usable: bool,
    }
    let mut libs: Vec<Lib> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "d") && p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("failed to read D library {}: {}", path.display(), io_reason(&e)))?;
            libs.push(Lib { path, text, deps: Vec::new(), usable: true });
        }
    }
    // Dependencies, from the pragma lines (read before parsing: a library
    // may use the types of one it depends on).
    for i in 0..libs.len() {
        let (mut deps, mut usable) = (Vec::new(), true);
        for line in libs[i].text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["#pragma", "D", "depends_on", "library", name, ..] => {
                    match libs.iter().position(|l| l.path.file_name().is_some_and(|f| f == *name)) {
                        Some(j) => deps.push(j),
                        // dt_lib_build_graph's error: no library of that name.
                        None => {
                            return Err(format!("Invalid library dependency in {}: {name}", libs[i].path.display()))
                        }
                    }
                }
                ["#pragma", "D", "depends_on", "provider", name, ..] => usable &= registry.has_provider(name),
                _ => {}
            }
        }
        libs[i].deps = deps;
        libs[i].usable = usable;
    }
    // Depth first, dependencies before dependents; a library met again
    // while its own dependencies are being ordered closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(i: usize, libs: &[Lib], marks: &mut [Mark], order: &mut Vec<usize>) -> Result<(), String> {
        marks[i] = Mark::Open;
        for &d in &libs[i].deps {
            match marks[d] {
                Mark::Open => {
                    return Err(format!(
                        "Cyclic dependency detected: {} => {}",
                        libs[d].path.display(),
                        libs[i].path.display()
                    ))
                }
                Mark::New => visit(d, libs, marks, order)?,
                Mark::Done => {}
            }
        }
        marks[i] = Mark::Done;
        order.push(i);
        Ok(())
    }
    let mut marks = vec![Mark::New; libs.len()];
    let mut order = Vec::new();
    for i in 0..libs.len() {
        if marks[i] == Mark::New {
            visit(i, &libs, &mut marks, &mut order)?;
        }
    }
    // A library whose dependency is skipped is skipped too.
    let mut parsed = Vec::new();
    for i in order {
        if !libs[i].usable || libs[i].deps.iter().any(|&d| !libs[d].usable) {
            libs[i].usable = false;
            continue;
        }
        let is_type = |name: &str| is_type_name(name) || types.contains(name);
        let program = syntax::parse(&libs[i].text, &is_type).map_err(|e| {
            let line = libs[i].text[..e.span.start.min(libs[i].text.len())].matches('\n').count() + 1;
            format!("failed to compile D library {}: line {line}: {}", libs[i].path.display(), e.message)
        })?;
        let entry = (libs[i].path.display().to_string(), program);
        types.extend(typedef_names(std::slice::from_ref(&entry)));
        parsed.push(entry);
    }
    Ok(parsed)
}

/// `#pragma D option name[=value]`: sets the option, or says why not with
/// dt_pragma.c's tags (D_PRAGMA_MALFORM, D_PRAGMA_OPTSET).
fn apply_pragma(words: &[String], options: &mut Options) -> Result<(), (&'static str, String)> {
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["D", "option", setting] => {
            let (name, value) = match setting.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (*setting, None),
            };
            options.set_from_program(name, value).map_err(|why| {
                let message = match value {
                    Some(v) => format!("failed to set option '{name}' to '{v}': {why}"),
                    None => format!("failed to set option '{name}': {why}"),
                };
                ("D_PRAGMA_OPTSET", message)
            })
        }
        ["D", "option"] => Err(("D_PRAGMA_MALFORM", "malformed #pragma option <option>=<val>".to_string())),
        ["D", "option", _, _, ..] => {
            Err(("D_PRAGMA_MALFORM", "superfluous arguments specified for #pragma option".to_string()))
        }
        // The program's own error, with its words, each followed by a
        // space (dt_pragma_error).
        ["D", "error", text @ ..] => Err(("D_PRAGERR", crate::syntax::error_directive_message(text))),
        // A script has no library to depend on (only D library files do).
        ["D", "depends_on", "library", ..] => {
            Err(("D_PRAGMA_DEPEND", "main program may not explicitly depend on a library".to_string()))
        }
        // Attributes for something that is no identifier (`func;`) apply
        // to nothing.
        ["D", "attributes", _, name] if !is_identifier(name) => {
            Err(("D_PRAGMA_UNUSED", "unused #pragma attributes".to_string()))
        }
        // `<attributes> <ident>`, or a provider's part (USDT definitions):
        // `<attributes> provider <name> provider|module|function|name|args`.
        ["D", "attributes", attributes, _]
        | ["D", "attributes", attributes, "provider", _, "provider" | "module" | "function" | "name" | "args"] => {
            if valid_attributes(attributes) {
                Ok(())
            } else {
                Err(("D_PRAGMA_INVAL", "invalid attributes specified by #pragma attributes".to_string()))
            }
        }
        ["D", "attributes", ..] => {
            Err(("D_PRAGMA_MALFORM", "malformed #pragma attributes <attributes> <ident>".to_string()))
        }
        // A #pragma with nothing after it (DTrace's lexer reaches the end
        // of the line, or of the file, inside the pragma).
        [] => Err(("D_PRAGMA_MALFORM", "malformed #pragma".to_string())),
        // Other #pragma D forms (depends_on a provider or module, binding)
        // and non-D pragmas are accepted and ignored, as by DTrace.
        _ => Ok(()),
    }
}

/// Whether `name` is a D identifier (a kernel symbol's module`name too).
fn is_identifier(name: &str) -> bool {
    let first = name.chars().next();
    first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '`')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '`')
}

/// Whether `text` is a stability attribute triple as dtrace_str2attr()
/// reads it: name/data/class (`Stable/Stable/Common`).
fn valid_attributes(text: &str) -> bool {
    const STABILITY: [&str; 8] =
        ["Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard"];
    const CLASS: [&str; 6] = ["Unknown", "CPU", "Platform", "Group", "ISA", "Common"];
    let parts: Vec<&str> = text.split('/').collect();
    parts.len() == 3 && STABILITY.contains(&parts[0]) && STABILITY.contains(&parts[1]) && CLASS.contains(&parts[2])
}

/// Runs the C preprocessor over a script (-C), as DTrace does, with the
/// names DTrace defines for D programs and the -D/-U/-I arguments. The
/// cpppath option's program, or else the first of cpp, gcc -E and clang -E
/// that exists, is used.
/// The D language version (`dtrace -vV`); `__SUNW_D_VERSION` encodes it
/// as DTrace's DT_VERSION_NUMBER does: major << 24 | minor << 12 | micro.
pub(crate) const D_VERSION: &str = "1.13.0";

/// What cpp defines for D scripts, as DTrace's dt_open does: the system's
/// names but none of the C compiler's own (`-undef` drops __GNUC__).
fn cpp_definitions() -> Vec<String> {
    let mut defs: Vec<String> =
        ["__linux", "__linux__", "__unix", "__unix__", "__SVR4", "__Linux", "__SUNW_D_64", "_LP64", "__LP64__"]
            .iter()
            .map(|d| format!("-D{d}"))
            .collect();
    let arch: &[&str] = match std::env::consts::ARCH {
        "x86_64" => &["__amd64", "__x86_64", "__x86_64__"],
        "aarch64" => &["__aarch64__"],
        _ => &[],
    };
    defs.extend(arch.iter().map(|d| format!("-D{d}")));
    let version: Vec<u32> = D_VERSION.split('.').map(|n| n.parse().unwrap_or(0)).collect();
    let number = version[0] << 24 | version[1] << 12 | version[2];
    defs.push("-D__SUNW_D=1".to_string());
    defs.push(format!("-D__SUNW_D_VERSION=0x{number:08x}"));
    defs
}

fn preprocess(text: &str, path: &str, args: &[String], cpppath: Option<&str>) -> Result<String, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    // A `#!` interpreter line is for the shell, not for cpp.
    let body = match text.strip_prefix("#!") {
        Some(rest) => format!("\n{}", rest.split_once('\n').map_or("", |(_, after)| after)),
        None => text.to_string(),
    };
    let dir = std::path::Path::new(path).parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let found = [("cpp", None), ("gcc", Some("-E")), ("clang", Some("-E"))];
    let chosen = cpppath.map(|p| [(p, None)]);
    let candidates: &[(&str, Option<&str>)] = match &chosen {
        Some(one) => one,
        None => &found,
    };
    for &(program, first) in candidates {
        let mut cmd = Command::new(program);
        // argv[0] is the program's base name, as DTrace's dt_cpp_argv has it.
        std::os::unix::process::CommandExt::arg0(&mut cmd, program.rsplit('/').next().unwrap_or(program));
        // The definitions lead, as in DTrace's cpp argument vector (a
        // cpppath program that is not a C preprocessor names them first).
        // The script comes on stdin, named /dev/stdin as DTrace's cpp
        // names it; cpp's own messages go straight to our stderr.
        cmd.args(first).args(cpp_definitions()).args(["-x", "c", "-undef"]);
        if cpppath.is_none() {
            // cpp, gcc and clang: messages name the line, as DTrace's show.
            cmd.arg("-fno-show-column");
        }
        cmd.arg(format!("-I{}", if dir.is_empty() { "." } else { &dir }))
            .args(args)
            .arg("/dev/stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let Ok(mut child) = cmd.spawn() else { continue };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(&syntax::raw::bytes_of(&body));
        }
        let out = child.wait_with_output().map_err(|e| format!("failed to run {program}: {e}"))?;
        if !out.status.success() {
            // EDT_CPPERR, after cpp has said why.
            return Err(format!("failed to compile script {path}: Preprocessor failed to process input program"));
        }
        return Ok(syntax::raw::text_from_bytes(&out.stdout));
    }
    Err(match cpppath {
        Some(program) => format!("failed to preprocess {path}: cannot run {program}"),
        None => "failed to preprocess: no C preprocessor (cpp, gcc or clang) found".to_string(),
    })
}

/// How dtrace names a source in its "matched N probes" notice.
fn notice_name(source: &ProgramSource) -> String {
    match source {
        ProgramSource::Script(path) => format!("script '{path}'"),
        ProgramSource::Probe { given, .. } => format!("description '{given}'"),
        ProgramSource::Description(text) => {
            // dtrace shows the description up to its predicate or actions.
            let end = text.find(['/', '{', ';']).unwrap_or(text.len());
            format!("description '{}'", &text[..end])
        }
    }
}

/// A -n description whose probe is given by its ID (digits before any
/// predicate or actions): the description by name, with the rest, or why
/// there is none in dt_node_pdesc_by_id's words. None: not an ID.
pub(crate) fn probe_by_id(text: &str, registry: &Registry) -> Option<Result<String, String>> {
    let (spec, rest) = crate::flags::split_clause(text);
    let digits = spec.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(crate::flags::probe_id_number(digits).and_then(|id| match registry.get(id) {
        Some(probe) => Ok(format!("{}{rest}", probe.full_name())),
        None => Err(format!("invalid probe identifier {id}: Unknown probe identifier")),
    }))
}

/// `dtrace: failed to compile script x.d: line N: ...` for scripts,
/// `dtrace: invalid probe specifier TEXT: in action list: ...` for -n
/// descriptions. As in libdtrace, a message with a line number does not name
/// the region, and -x errtags puts the error's tag first.
fn format_error(source: &ProgramSource, text: &str, e: &CompileError, region: &str, errtags: bool) -> String {
    let tag = if errtags { format!("[{}] ", e.tag) } else { String::new() };
    // DTrace's lexer replaces macro arguments and reads integers, and its
    // code generator runs out of registers: those errors belong to no region.
    let region = if e.tag.starts_with("D_MACRO_") || matches!(e.tag, "D_INT_OFLOW" | "D_NOREG") { "" } else { region };
    match source {
        ProgramSource::Script(path) => {
            let place = match &e.span {
                Some(s) => format!("line {}: ", syntax::line_of(text, s.start)),
                None => region.to_string(),
            };
            format!("failed to compile script {path}: {tag}{place}{}", e.message)
        }
        ProgramSource::Description(desc) | ProgramSource::Probe { given: desc, .. } => {
            format!("invalid probe specifier {desc}: {tag}{region}{}", e.message)
        }
    }
}

/// Scripts larger than this are refused: `-s /dev/zero` must not read
/// until memory runs out. DTrace's own limits on a program are far lower.
const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// A script's text (`-` is standard input); bytes that are not UTF-8 are
/// kept (`syntax::raw`), as D strings are bytes.
fn read_script(path: &str) -> Result<String, String> {
    use std::io::Read;
    let failed = |e: std::io::Error| format!("failed to open {path}: {}", io_reason(&e));
    let reader: Box<dyn Read> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(syntax::raw::os_of(path)).map_err(failed)?)
    };
    let mut bytes = Vec::new();
    reader.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(failed(std::io::Error::from_raw_os_error(libc::EFBIG)));
    }
    Ok(syntax::raw::text_from_bytes(&bytes))
}

/// An I/O error as dtrace(1) words it (strerror, without Rust's "(os error N)").
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => without_os_error(&std::io::Error::from_raw_os_error(code).to_string()),
        None => e.to_string(),
    }
}

/// A message without the " (os error N)" that Rust's I/O errors append,
/// wherever in a chain of causes it appears: dtrace(1) prints strerror's
/// text alone.
pub(crate) fn without_os_error(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" (os error ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " (os error ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            rest = &after[digits + 1..];
        } else {
            out.push_str(" (os error ");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    /// The D library names kernel types only where a script's use looks
    /// them up: reading the kernel's BTF costs 2-3 ms of every start-up.
    #[test]
    fn a_script_that_names_no_kernel_type_reads_no_kernel_btf() {
        let compile_on_this_thread = |text: &str| {
            let loads = || crate::sema::kernel_btf::LOADS_ON_THIS_THREAD.with(|n| n.get());
            let before = loads();
            super::compile_for_test(text).expect("compiles");
            loads() - before
        };
        assert_eq!(compile_on_this_thread("BEGIN { exit(0); }"), 0);
        // The test itself can tell: a kernel type is read when named.
        assert_eq!(compile_on_this_thread("BEGIN { trace(sizeof (spinlock_t)); exit(0); }"), 1);
    }

    /// Fuzzes the whole front end (parser, checker, code generator, as
    /// `dtrace -e` runs them) with mutations of the scripts in tests/corpus:
    /// bytes removed, inserted or changed, and pieces of one script spliced
    /// into another. Any outcome but a panic is fine. A short run is part of
    /// the test suite; a long one:
    /// `DTRACE_FUZZ_ITERATIONS=200000 DTRACE_FUZZ_SEED=7 cargo test --release --bin dtrace front_end_fuzz`.
    #[test]
    fn front_end_fuzz() {
        let env = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let iterations = env("DTRACE_FUZZ_ITERATIONS", 2000);
        let seed = env("DTRACE_FUZZ_SEED", 0x5eed_d7ace);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut corpus: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .expect("tests/corpus")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "d"))
            .filter_map(|p| std::fs::read(p).ok())
            .collect();
        corpus.sort();
        assert!(corpus.len() > 100, "the corpus seeds the fuzzer");
        const PIECES: &[&[u8]] =
            &[b"(", b")", b"{", b"}", b"[", b"]", b"/", b";", b",", b"\"", b"'", b"@", b"$1", b"->", b"*", b"&", b"\n"];
        let mut rng = crate::syntax::XorShift(seed | 1);
        for i in 0..iterations {
            let mut text = corpus[rng.below(corpus.len())].clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(text.len() + 1);
                match rng.below(4) {
                    0 if at < text.len() => {
                        let end = (at + 1 + rng.below(8)).min(text.len());
                        text.drain(at..end);
                    }
                    1 => {
                        let piece = PIECES[rng.below(PIECES.len())];
                        text.splice(at..at, piece.iter().copied());
                    }
                    2 if at < text.len() => text[at] = rng.next() as u8,
                    _ => {
                        let other = &corpus[rng.below(corpus.len())];
                        let from = rng.below(other.len());
                        let to = (from + rng.below(64)).min(other.len());
                        text.splice(at..at, other[from..to].iter().copied());
                    }
                }
            }
            let source = crate::syntax::raw::text_from_bytes(&text);
            let outcome = std::panic::catch_unwind(|| {
                let mut options = crate::flags::Options::default();
                let mut registry = crate::provider::Registry::new();
                let sources = [crate::flags::ProgramSource::Description(source.clone())];
                let _ = super::compile(
                    &sources,
                    &["dtrace".to_string(), "1".to_string()],
                    &mut options,
                    &mut registry,
                    super::Context {
                        zero_matches_ok: true,
                        target_pid: None,
                        task_storage: || false,
                        bpf_loop: || false,
                    },
                );
            });
            assert!(outcome.is_ok(), "iteration {i} (seed {seed}) panicked on:\n{source}");
        }
    }

    #[test]
    fn os_error_suffixes_are_removed_wherever_they_appear() {
        let message = "could not enable tracing: attach failed: Operation not permitted (os error 1): \
                       bpf_link_create: No such device (os error 19)";
        assert_eq!(
            super::without_os_error(message),
            "could not enable tracing: attach failed: Operation not permitted: bpf_link_create: No such device"
        );
        assert_eq!(super::without_os_error("a (os error x) b"), "a (os error x) b");
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(super::io_reason(&e), "No space left on device");
    }
}
