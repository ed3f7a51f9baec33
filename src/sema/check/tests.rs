//! The type checker without privileges: D declarations, pointer
//! arithmetic and translators type-check (or fail) as DTrace's do. Kernel
//! types come from /sys/kernel/btf/vmlinux, which any user may read.

use super::*;
use crate::compile::compile_description as compile;

/// The type of the first traced value in `BEGIN { trace(expr); }`.
fn type_of(expr: &str) -> String {
    let program = compile(&format!("BEGIN {{ trace({expr}); }}")).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let TStmt::Action { kind: ActionKind::Record(values), .. } = &program.clauses[0].body[0] else {
        panic!("{expr}: not a trace")
    };
    values[0].ty.name()
}

fn error_of(src: &str) -> String {
    match compile(src) {
        Ok(_) => panic!("{src}: compiled"),
        Err(e) => {
            let message = e.split_once(&format!("{src}: ")).map_or(e.as_str(), |(_, m)| m);
            message.trim_start_matches(REGION_ACTIONS).to_string()
        }
    }
}

fn has_btf() -> bool {
    std::path::Path::new("/sys/kernel/btf/vmlinux").exists()
}

#[test]
fn pointer_arithmetic_keeps_the_pointer_type_and_differences_count_elements() {
    assert_eq!(type_of("(int *)0 + 1"), "int *");
    assert_eq!(type_of("1 + (long *)0"), "long *");
    assert_eq!(type_of("(int *)8 - (int *)0"), "ptrdiff_t");
    assert_eq!(type_of("*(short *)0"), "short");
    assert_eq!(type_of("((char **)0)[2]"), "char *");
    assert_eq!(
        error_of("BEGIN { trace((int *)0 + (int *)0); }"),
        "operands have incompatible types: \"int *\" + \"int *\""
    );
    assert_eq!(
        error_of("BEGIN { trace((int *)0 - (long *)0); }"),
        "operands have incompatible types: \"int *\" - \"long *\""
    );
}

#[test]
fn d_structs_are_laid_out_as_ctf_lays_them_out() {
    // Members aligned as C aligns them, but nothing after the last member
    // (ctf_add_member): struct t is 5 bytes, union u 3.
    let src = "struct s { char c; int i; char name[5]; long l; }; union u { char c[3]; short s; };
               struct t { int a; char b; };
               BEGIN { trace(sizeof (struct s)); trace(offsetof(struct s, name)); trace(offsetof(struct s, l));
                       trace(sizeof (union u)); trace(sizeof (struct t)); }";
    let program = compile(src).expect("compiles");
    let sizes: Vec<u64> = program.clauses[0]
        .body
        .iter()
        .map(|s| match s {
            TStmt::Action { kind: ActionKind::Record(v), .. } => match v[0].kind {
                TKind::Int(n) => n,
                _ => panic!("not a constant"),
            },
            _ => panic!("not a trace"),
        })
        .collect();
    assert_eq!(sizes, [24, 8, 16, 3, 5]);
    assert_eq!(
        error_of("struct s { int a; int a; };"),
        "failed to define member 'a': Duplicate member or variable name"
    );
    assert_eq!(error_of("struct s { int a; }; struct s { int b; };"), "type redeclared: struct s");
}

#[test]
fn enumerators_typedefs_and_inlines_are_names_for_values_and_types() {
    assert!(compile("typedef unsigned char my_t; BEGIN { trace(sizeof (my_t)); trace((my_t)300); }").is_ok());
    let program = compile("enum e { A = 3, B }; inline int C = B * 2; BEGIN { trace(C); }").expect("compiles");
    let TStmt::Action { kind: ActionKind::Record(v), .. } = &program.clauses[0].body[0] else { panic!() };
    assert_eq!(v[0].ty, Type::INT);
    assert_eq!(
        error_of("inline int X = 1; inline int X = 2;"),
        "identifier redefined: X\n\t current: inline definition\n\tprevious: scalar inline"
    );
}

/// The constant an inline's single trace() records.
fn traced_constant(source: &str) -> u64 {
    let program = compile(source).expect("compiles");
    let TStmt::Action { kind: ActionKind::Record(v), .. } = &program.clauses[0].body[0] else { panic!() };
    match v[0].kind {
        TKind::Int(n) => n,
        ref other => panic!("not a constant: {other:?}"),
    }
}

#[test]
fn chained_inlines_are_checked_once_each() {
    // Each use used to check the value again: 2^depth checks (depth 22 took
    // 5 s and 1 GB). Constants fold; other chains stop at a bound.
    let chain = |first: &str, depth: usize| {
        let mut text = format!("inline int i0 = {first};\n");
        for k in 1..=depth {
            text += &format!("inline int i{k} = i{} + i{};\n", k - 1, k - 1);
        }
        text + &format!("BEGIN {{ trace(i{depth}); }}")
    };
    assert_eq!(traced_constant(&chain("1", 30)), 1 << 30);
    let error = error_of(&chain("pid", 30));
    assert!(error.starts_with("inline i16 is too large"), "{error}");
    // A folded inline keeps its type's width, as the cast would.
    assert_eq!(traced_constant("inline uint8_t x = 300; BEGIN { trace(x); }"), 44);
    assert_eq!(traced_constant("inline int8_t y = 255; BEGIN { trace(y); }"), u64::MAX);
}

#[test]
fn inlines_with_parameters_bind_each_argument() {
    // illumos' tcp.d: `inline string tcp_state_string[int32_t state] = ...`.
    let src = |use_: &str| {
        format!(
            "inline int twice[int x, int y] = x * 2 + y; inline string name[int s] = s == 0 ? \"zero\" : \"other\";
             BEGIN {{ trace({use_}); }}"
        )
    };
    assert_eq!(traced_constant(&src("twice[20, 2]")), 42);
    assert_eq!(type_of("tcp_state_string[TCP_STATE_ESTABLISHED]"), "string");
    assert_eq!(type_of("tcp_state_string[(int32_t)arg0]"), "string");
    assert!(compile(&src("name[pid]")).is_ok());
    assert_eq!(error_of(&src("twice[1]")), "twice[ ] takes 2 argument(s), not 1");
    assert_eq!(error_of(&src("name")), "name takes 1 argument(s): use name[...]");
}

#[test]
fn reading_a_cpu_t_or_cpuinfo_t_asks_the_runtime_to_describe_the_cpus() {
    for (src, uses) in [
        ("BEGIN { trace(curcpu->cpu_id); }", true),
        ("BEGIN { trace(((cpu_t *)arg2)->cpu_id); }", true),
        ("BEGIN { trace(((struct cpu *)arg2)->cpu_seqid); }", true),
        ("BEGIN { print(*(cpuinfo_t *)arg0); }", true),
        ("BEGIN { trace(sizeof (cpu_t)); trace(cpu); }", false),
    ] {
        assert_eq!(compile(src).expect("compiles").uses_cpuinfo, uses, "{src}");
    }
}

#[test]
fn translators_check_their_members_when_used() {
    if !has_btf() {
        return;
    }
    assert_eq!(type_of("curpsinfo->pr_pid"), "pid_t");
    assert_eq!(type_of("curpsinfo->pr_fname"), "string");
    assert_eq!(type_of("xlate <lwpsinfo_t *> (curthread)->pr_lwpid"), "id_t");
    assert_eq!(error_of("BEGIN { trace(curpsinfo->pr_x); }"), "translator does not define conversion for member: pr_x");
    assert_eq!(error_of("BEGIN { trace(curpsinfo); }"), "a translated psinfo_t * can only be used with -> or . yet");
}

#[test]
fn only_pr_psargs_asks_the_runtime_for_its_table_of_command_lines() {
    if !has_btf() {
        return;
    }
    for (src, uses) in [
        ("BEGIN { trace(curpsinfo->pr_psargs); }", true),
        ("proc:::signal-send { trace(args[1]->pr_psargs); }", true),
        ("BEGIN { trace(curpsinfo->pr_pid); trace(curpsinfo->pr_fname); }", false),
    ] {
        assert_eq!(compile(src).expect("compiles").uses_psargs_table, uses, "{src}");
    }
}

#[test]
fn kernel_arrays_index_and_bitfields_read_as_integers() {
    if !has_btf() {
        return;
    }
    assert_eq!(type_of("curthread->signal->pids[1]"), "struct pid *");
    assert_eq!(type_of("curthread->comm[0]"), "char");
    assert_eq!(type_of("curthread->signal->is_child_subreaper"), "unsigned int");
    assert_eq!(type_of("sizeof (curthread->comm)"), "size_t");
}

#[test]
fn ip_probe_arguments_are_the_d_librarys_structs() {
    // No kernel type is involved: the structs are d-library/ip.d's.
    let traced = |expr: &str| {
        let program =
            compile(&format!("ip:::send, ip:::receive {{ trace({expr}); }}")).unwrap_or_else(|e| panic!("{expr}: {e}"));
        let TStmt::Action { kind: ActionKind::Record(values), .. } = &program.clauses[0].body[0] else {
            panic!("{expr}: not a trace")
        };
        values[0].ty.name()
    };
    assert_eq!(traced("args[0]->pkt_addr"), "uintptr_t");
    assert_eq!(traced("args[1]->cs_pid"), "pid_t");
    assert_eq!(traced("args[2]->ip_ver"), "uint8_t");
    assert_eq!(traced("args[2]->ip_plength"), "uint32_t");
    assert_eq!(traced("args[4]->ipv4_src"), "ipaddr_t");
    assert_eq!(traced("args[5]->ipv6_flow"), "uint32_t");
    assert_eq!(traced("args[3]->if_local"), "int8_t");
    for member in ["args[2]->ip_saddr", "args[3]->if_name", "args[4]->ipv4_protostr", "args[5]->ipv6_daddr"] {
        assert_eq!(traced(member), "string", "{member}");
    }
    // Address strings in predicates, comparisons and aggregation keys.
    let src = "ip:::send /args[2]->ip_daddr == \"10.0.0.1\" && args[4] != NULL/ {
                   @[args[2]->ip_saddr, args[4]->ipv4_protostr, execname] = quantize(args[2]->ip_plength);
                   printf(\"%s %s\\n\", args[3]->if_name, args[5]->ipv6_nextstr); }";
    compile(src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(error_of("ip:::send { trace(args[2]->ip_src); }"), "ip_src is not a member of struct ipinfo");
    assert_eq!(error_of("ip:::send { trace(args[6]); }"), "index 6 is out of range for ip:::send args[ ]");
}

#[test]
fn typed_args_record_the_members_read_through_arrow() {
    // io's entry program reads only what bufinfo_t's and fileinfo_t's read
    // members need (dt_io_want_pages, dt_io_want_fi_*).
    let members = |src: &str| {
        let program = compile(src).unwrap_or_else(|e| panic!("{e}"));
        let mut by_arg: Vec<(usize, Option<Vec<String>>)> = program
            .typed_arg_members
            .iter()
            .map(|((_, n), read)| (*n, read.as_ref().map(|r| r.iter().cloned().collect())))
            .collect();
        by_arg.dedup();
        by_arg
    };
    let some = |names: &[&str]| Some(names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    assert_eq!(
        members("io:::start { @[args[2]->fi_pathname] = sum(args[0]->b_bcount); trace(args[0]->b_flags); }"),
        [(0, some(&["b_bcount", "b_flags"])), (2, some(&["fi_pathname"]))]
    );
    // A pointer used any other way may be read at any member.
    assert_eq!(members("io:::start { this->b = args[0]; trace(this->b->b_bcount); }"), [(0, None)]);
    assert_eq!(members("io:::start { trace(args[0]->b_bcount); trace((*args[0]).b_edev); }"), [(0, None)]);
}

#[test]
fn char_array_keys_take_their_length_not_strsize() {
    // The seed's fileio.d: device name (char[32]), file name (char[256]) and
    // execname fit in one key of Linux 5.10's 512 bytes.
    let program =
        compile("io:::start { @bytes[args[1]->dev_statname, args[2]->fi_name, execname] = sum(args[0]->b_bcount); }")
            .expect("compiles");
    let columns: Vec<usize> = program.aggregations[0].keys.iter().map(|c| c.bytes).collect();
    assert_eq!(columns, [40, 264, 16]);
    // Another update with a strsize string widens the column for both
    // (256 characters and the NUL, in 8-byte units).
    let program =
        compile(r#"BEGIN { @[curthread->comm] = count(); @[strjoin("a", "b")] = count(); }"#).expect("compiles");
    assert_eq!(program.aggregations[0].keys.iter().map(|c| c.bytes).collect::<Vec<_>>(), [264]);
}

#[test]
fn arithmetic_takes_the_operand_of_higher_rank_without_promotion_to_int() {
    // dt_type_promote: rank is bits, plus one if unsigned.
    assert_eq!(type_of("(unsigned char)1 + (char)1"), "unsigned char");
    assert_eq!(type_of("(short)1 * (char)1"), "short");
    assert_eq!(type_of("(char)1 + 1"), "int");
    assert_eq!(type_of("(unsigned int)1 - (long)1"), "long");
    assert_eq!(type_of("-(unsigned char)1"), "unsigned char");
    assert_eq!(type_of("(unsigned short)1 << 20"), "unsigned short");
}

#[test]
fn alloca_and_copyin_sizes_are_bounded_by_scratchsize() {
    let program = "#pragma D option scratchsize=1024\nBEGIN { p = alloca(1025); }";
    assert_eq!(error_of(program), "alloca(1025) size larger than scratchsize 1024");
    let program = "#pragma D option scratchsize=64\nBEGIN { p = copyin(0, 65); }";
    assert_eq!(error_of(program), "copyin( ) size 65 larger than scratchsize 64");
    assert!(compile("#pragma D option scratchsize=8192\nBEGIN { p = alloca(8000); }").is_ok());
}

#[test]
fn symbol_functions_type_addresses_to_print_as_symbols() {
    assert_eq!(type_of("func(caller)"), "_symaddr");
    assert_eq!(type_of("mod(0xffffffff81000000)"), "_symaddr");
    assert_eq!(type_of("ufunc(ucaller)"), "_usymaddr");
    assert_eq!(type_of("uaddr(arg0)"), "_usymaddr");
    assert_eq!(type_of("caller"), "uintptr_t");
    // A user symbol is recorded with the pid whose mappings name it.
    let program = compile("BEGIN { @[usym(ucaller), sym(caller)] = count(); }").unwrap();
    let bytes: Vec<usize> = program.aggregations[0].keys.iter().map(|k| k.bytes).collect();
    assert_eq!(bytes, [16, 8]);
    assert!(error_of(r#"BEGIN { func("vfs_read"); }"#).contains("func( ) argument #1 is incompatible with prototype"));
    // Like stack(), they are values as well as actions.
    compile("BEGIN { @[arg0 ? func(caller) : func(0)] = count(); }").unwrap();
}

#[test]
fn members_of_self_and_element_structs_are_places() {
    let decl = "struct foo { int a; int b; }; self struct foo z; struct foo e[int];";
    assert!(compile(&format!("{decl} BEGIN {{ self->z.a = 4; self->z.b++; e[1].b += 2; }}")).is_ok());
    assert!(compile("struct foo { int a; }; struct foo x; BEGIN { x.a = 1; }").is_ok());
    // A member at an index only known at run time is not (yet).
    let arrays = "struct bar { int v[4]; }; struct bar e[int];";
    assert_eq!(
        error_of(&format!("{arrays} BEGIN {{ e[1].v[arg0] = 1; }}")),
        "a member of an associative array's struct at a variable index cannot be assigned yet"
    );
}
