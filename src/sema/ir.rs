//! The typed program: what the type checker hands to the code generator.
//!
//! Names are resolved (variables to slots, built-ins to `Builtin`), every
//! expression has a `Type`, and D's rules have been applied (string
//! comparison is `StrCmp`, not an integer compare). Nothing here knows BPF.

use crate::defs::ops::BinOp;
use crate::syntax::ast::Span;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Type {
    Void,
    /// C integer; `name` is how D spells it in messages (`int`, `uint64_t`).
    Int {
        size: u8,
        signed: bool,
        name: &'static str,
    },
    String,
    /// A pointer (8 bytes); dereferencing reads kernel memory.
    Pointer(Box<Type>),
    /// A kernel struct or union (from BTF). An expression of this type
    /// evaluates to the struct's address; members are read from there.
    Struct(std::rc::Rc<Record>),
    /// `stack()`: the ID of the kernel stack in the stack map.
    Stack,
    /// An array of `len` elements (a kernel struct's member, or declared in
    /// D). Like a struct, an expression of this type evaluates to its
    /// address; indexing reads an element.
    Array(Box<Type>, usize),
    /// An address that prints as a symbol (`func()`, `mod()`, `ufunc()`...,
    /// DTrace's `_symaddr` and `_usymaddr`): 8 bytes while computed; a user
    /// one is recorded with the current pid, whose mappings name it.
    Symbol(SymbolKind),
}

/// How a symbol-typed address prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SymbolKind {
    /// func(), sym(): the kernel function, `module`name`.
    Func,
    /// mod(): the kernel module.
    Mod,
    /// ufunc(), usym(): the user function, `module`name`.
    UFunc,
    /// umod(): the user object's file name.
    UMod,
    /// uaddr(): the user address, `module`name+0xoff`.
    UAddr,
}

impl SymbolKind {
    pub(crate) fn of_function(name: &str) -> Option<SymbolKind> {
        Some(match name {
            "func" | "sym" => SymbolKind::Func,
            "mod" => SymbolKind::Mod,
            "ufunc" | "usym" => SymbolKind::UFunc,
            "umod" => SymbolKind::UMod,
            "uaddr" => SymbolKind::UAddr,
            _ => return None,
        })
    }
    pub(crate) fn user(self) -> bool {
        matches!(self, SymbolKind::UFunc | SymbolKind::UMod | SymbolKind::UAddr)
    }
    /// Bytes of a recorded value (a record or a key column): the address,
    /// after the pid for a user one.
    pub(crate) fn recorded_bytes(self) -> usize {
        if self.user() {
            16
        } else {
            8
        }
    }
}

/// A struct or union: the running kernel's (from BTF) or declared in D.
#[derive(Debug, Clone, Eq)]
pub(crate) struct Record {
    pub name: String,
    /// The typedef it was named by (`kuid_t`, `psinfo_t`): DTrace's name
    /// for its type, as the types keep typedefs. Not part of its identity.
    pub typedef: Option<String>,
    pub union: bool,
    pub size: usize,
    pub body: RecordBody,
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        (&self.name, self.union, self.size, &self.body) == (&other.name, other.union, other.size, &other.body)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordBody {
    /// Members are looked up in BTF when a script names them.
    Kernel(btf_rs::Struct),
    /// Declared in D (a script or a `d-library/*.d` file), laid out as C would.
    D(Vec<DMember>),
    /// A D struct named inside its own declaration (`struct a { struct a
    /// *next; }`): completed by name when a member is reached through it.
    Forward,
}

/// A member of a struct declared in D.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DMember {
    pub name: String,
    /// Where the member starts; for a bit-field, where its storage unit
    /// (its type, aligned) starts.
    pub offset: usize,
    pub ty: Type,
    /// A bit-field's (bit position in its storage unit, width).
    pub bitfield: Option<(u32, u32)>,
}

impl Type {
    pub(crate) const INT: Type = Type::Int { size: 4, signed: true, name: "int" };
    pub(crate) const INT64: Type = Type::Int { size: 8, signed: true, name: "int64_t" };
    pub(crate) const UINT64: Type = Type::Int { size: 8, signed: false, name: "uint64_t" };
    pub(crate) const UINT: Type = Type::Int { size: 4, signed: false, name: "uint_t" };
    pub(crate) const CHAR: Type = Type::Int { size: 1, signed: true, name: "char" };

    pub(crate) fn is_int(&self) -> bool {
        matches!(self, Type::Int { .. })
    }
    /// Integers and pointers: what conditions and comparisons accept.
    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self, Type::Int { .. } | Type::Pointer(_) | Type::Symbol(_))
    }
    /// Strings and structs are stored by copying their bytes, and a value
    /// of their type is the address of those bytes (DTrace's by-reference
    /// types): the bytes a variable of this type holds.
    pub(crate) fn by_reference_size(&self, strsize: usize) -> Option<usize> {
        match self {
            Type::String => Some(strsize),
            Type::Struct(r) => Some(r.size.next_multiple_of(8)),
            Type::Array(..) => self.fixed_size().map(|n| n.next_multiple_of(8)),
            _ => None,
        }
    }

    /// C's alignment of a value of this type in memory (structs and unions:
    /// 8, as DTrace aligns its struct variables).
    pub(crate) fn alignment(&self) -> usize {
        match self {
            Type::Int { size, .. } => (*size as usize).max(1),
            Type::Array(of, _) => of.alignment(),
            _ => 8,
        }
    }

    /// Bytes of a value of this type in memory, as C lays it out (None for
    /// types without a fixed size: strings, stacks, void).
    pub(crate) fn fixed_size(&self) -> Option<usize> {
        match self {
            Type::Int { size, .. } => Some(*size as usize),
            Type::Pointer(_) | Type::Symbol(_) => Some(8),
            Type::Struct(r) => Some(r.size),
            Type::Array(of, len) => Some(of.fixed_size()? * len),
            _ => None,
        }
    }
    pub(crate) fn name(&self) -> String {
        match self {
            Type::Void => "void".into(),
            Type::Int { name, .. } => (*name).into(),
            Type::String => "string".into(),
            Type::Pointer(to) => format!("{} *", to.name()),
            Type::Struct(r) => match &r.typedef {
                Some(typedef) => typedef.clone(),
                None => format!("{} {}", if r.union { "union" } else { "struct" }, r.name),
            },
            Type::Stack => "stack".into(),
            Type::Array(of, len) => format!("{} [{len}]", of.name()),
            Type::Symbol(kind) => if kind.user() { "_usymaddr" } else { "_symaddr" }.into(),
        }
    }
}

/// What the consumer needs to print a value of some type as print() does:
/// type names, and for structs each member's place and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrintNode {
    /// The type as DTrace names it (`int`, `struct file *`, `char [16]`).
    pub name: String,
    pub kind: PrintKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrintKind {
    /// An integer of `size` bytes; a `char` prints as a character.
    Int {
        size: usize,
        signed: bool,
        char: bool,
    },
    Pointer,
    /// An enum of `size` bytes: its enumerator's name, else its number.
    Enum {
        size: usize,
        enumerators: Vec<(i64, String)>,
    },
    /// A D string (top-level only).
    String,
    Array {
        elem: Box<PrintNode>,
        len: usize,
        elem_size: usize,
    },
    Record(Vec<PrintMember>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrintMember {
    /// Empty for an anonymous struct or union.
    pub name: String,
    pub bit_offset: usize,
    /// The width of a bit-field.
    pub bits: Option<u32>,
    pub node: PrintNode,
}

/// Where a word of uregs[] is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UregsWord {
    /// Word `n` of the registers the thread entered the kernel with (the
    /// kernel's struct pt_regs).
    PtRegs(u32),
    /// A `size`-byte member of the current task_struct at `offset` (x86's
    /// segment registers and bases and trap number, in task->thread).
    Task { offset: usize, size: u8 },
    /// A register the kernel does not keep.
    Zero,
}

/// Values read from the kernel or the probe context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Arg(u8),
    Pid,
    Tid,
    Ppid,
    Uid,
    Gid,
    Execname,
    Timestamp,
    Walltimestamp,
    Cpu,
    ProbeProv,
    ProbeMod,
    ProbeFunc,
    ProbeName,
    Errno,
    Id,
    Epid,
    /// The current thread: `struct task_struct *`.
    Curthread,
    /// The number of frames in the kernel stack at the probe.
    Stackdepth,
    /// The number of frames in the user stack at the probe (0 in a kernel
    /// thread).
    Ustackdepth,
    /// The kernel address the probe was reached from.
    Caller,
    /// The user address the current thread was called from.
    Ucaller,
    /// The current thread's time on CPU (ns), counted from when tracing began.
    Vtimestamp,
    /// The interrupt priority level: Linux has none to show, so 0.
    Ipl,
    /// The current CPU: `cpuinfo_t *` into its entry of `dt_cpuinfo`.
    Curcpu,
}

impl Builtin {
    /// The name a script uses.
    pub(crate) fn name(&self) -> String {
        let name = match self {
            Builtin::Arg(n) => return format!("arg{n}"),
            Builtin::Pid => "pid",
            Builtin::Tid => "tid",
            Builtin::Ppid => "ppid",
            Builtin::Uid => "uid",
            Builtin::Gid => "gid",
            Builtin::Execname => "execname",
            Builtin::Timestamp => "timestamp",
            Builtin::Walltimestamp => "walltimestamp",
            Builtin::Cpu => "cpu",
            Builtin::ProbeProv => "probeprov",
            Builtin::ProbeMod => "probemod",
            Builtin::ProbeFunc => "probefunc",
            Builtin::ProbeName => "probename",
            Builtin::Errno => "errno",
            Builtin::Id => "id",
            Builtin::Epid => "epid",
            Builtin::Curthread => "curthread",
            Builtin::Stackdepth => "stackdepth",
            Builtin::Ustackdepth => "ustackdepth",
            Builtin::Caller => "caller",
            Builtin::Ucaller => "ucaller",
            Builtin::Vtimestamp => "vtimestamp",
            Builtin::Ipl => "ipl",
            Builtin::Curcpu => "curcpu",
        };
        name.to_string()
    }

    /// DTrace's DIF variable ID of it (sys/dtrace.h's DIF_VAR_*; cpu and
    /// curcpu as FreeBSD numbers them), as -S shows it.
    pub(crate) fn dif_id(&self) -> u32 {
        match self {
            Builtin::Curthread => 0x100,
            Builtin::Timestamp => 0x101,
            Builtin::Vtimestamp => 0x102,
            Builtin::Ipl => 0x103,
            Builtin::Epid => 0x104,
            Builtin::Id => 0x105,
            Builtin::Arg(n) => 0x106 + u32::from(*n),
            Builtin::Stackdepth => 0x110,
            Builtin::Caller => 0x111,
            Builtin::ProbeProv => 0x112,
            Builtin::ProbeMod => 0x113,
            Builtin::ProbeFunc => 0x114,
            Builtin::ProbeName => 0x115,
            Builtin::Pid => 0x116,
            Builtin::Tid => 0x117,
            Builtin::Execname => 0x118,
            Builtin::Walltimestamp => 0x11a,
            Builtin::Ustackdepth => 0x11b,
            Builtin::Ucaller => 0x11c,
            Builtin::Ppid => 0x11d,
            Builtin::Uid => 0x11e,
            Builtin::Gid => 0x11f,
            Builtin::Errno => 0x120,
            Builtin::Cpu => 0x200,
            Builtin::Curcpu => 0x201,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Var {
    /// Index into `Program::globals`.
    Global(usize),
    /// Index into `Program::thread_locals`.
    ThreadLocal(usize),
    /// Index into `Program::clause_locals`.
    ClauseLocal(usize),
}

/// Something assignable: a variable or an element of an associative array.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    Var(Var),
    /// `name[keys]` or `self->name[keys]`: index into `Program::assoc_arrays`.
    Element {
        array: usize,
        keys: Vec<TExpr>,
    },
    /// A scalar member of an associative array's struct element
    /// (`i[probefunc].calls++`), `offset` bytes into it: a store creates the
    /// element zero-filled first, as DTrace's dynamic variables are.
    ElementMember {
        array: usize,
        keys: Vec<TExpr>,
        offset: u64,
    },
    /// A scalar member of a thread-local struct (`self->s.count++`), as
    /// ElementMember.
    ThreadLocalMember {
        var: usize,
        offset: u64,
    },
    /// What a pointer points at (`*p`, `p[i]`, `p->m`), at the address the
    /// expression computes. Only D's own memory (alloca(), clause-local
    /// strings) may be written; a store anywhere else is a bad-address
    /// fault, as DTrace's dtrace_canstore makes it.
    Memory(Box<TExpr>),
    /// A bit-field in memory: `bits` bits, `shift` bits into the storage
    /// unit of type `unit` at the address the expression computes (a store
    /// reads the unit, replaces the field's bits and writes it back).
    Bitfield {
        addr: Box<TExpr>,
        unit: Type,
        shift: u32,
        bits: u32,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct TExpr {
    pub kind: TKind,
    pub ty: Type,
    pub span: Span,
}

/// `Program::strings[NULL_STRING]` is a NULL string: what a string
/// variable holds after `s = NULL`, and a missing thread-local or
/// associative array element. It reads as "" but has no bytes to index
/// (`s[1]` faults at address 1, as DTrace's NULL pointer does): its first
/// two bytes are NUL and 0xff, which no text after a NUL holds in
/// practice (0xff is never in UTF-8).
pub(crate) const NULL_STRING: usize = 1;
pub(crate) const NULL_STRING_BYTES: &[u8] = b"\0\xff";

#[derive(Debug, Clone)]
pub(crate) enum TKind {
    Int(u64),
    /// Index into `Program::strings`.
    Str(usize),
    Builtin(Builtin),
    Var(Var),
    /// Reads an associative array element (0 or "" when absent).
    Element {
        array: usize,
        keys: Vec<TExpr>,
    },
    Neg(Box<TExpr>),
    BitNot(Box<TExpr>),
    Not(Box<TExpr>),
    /// Integer arithmetic, bitwise and comparison operators; `signed` says
    /// how division, shifts and comparisons treat the operands.
    Binary {
        op: BinOp,
        signed: bool,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    /// `&&`, `||`, `^^` with short-circuit evaluation.
    Logical {
        op: BinOp,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    /// String comparison with ==, !=, <, <=, >, >=.
    StrCmp {
        op: BinOp,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    Ternary(Box<TExpr>, Box<TExpr>, Box<TExpr>),
    /// `place = value` or `place op= value`; the value of the expression is the new value.
    Assign {
        place: Place,
        op: Option<BinOp>,
        signed: bool,
        value: Box<TExpr>,
    },
    /// `++place`, `place--`, ...
    IncDec {
        place: Place,
        delta: i32,
        post: bool,
    },
    /// Integer conversion to `ty` (truncation and sign/zero extension).
    Cast(Box<TExpr>),
    /// `*p`: reads an integer or pointer of the expression's type from kernel memory at p.
    Load(Box<TExpr>),
    /// A char array member read as a string of at most `len` bytes.
    LoadStr(Box<TExpr>, usize),
    /// Address arithmetic: the value plus a constant (member offsets).
    Offset(Box<TExpr>, u64),
    /// Assigning NULL to a string variable or element: frees a thread-local
    /// or an element, empties a global.
    ClearVar(Place),
    /// copyinstr(addr[, maxlen]): the string at a user address, of at most
    /// maxlen bytes with its NUL (and at most strsize characters).
    CopyInStr(Box<TExpr>, Option<Box<TExpr>>),
    /// A D subroutine computed in the kernel.
    Subr(Subr, Vec<TExpr>),
    /// `stack(n)`: the current kernel stack's ID in the stack map of depth
    /// n (n, or stackframes), with n packed in (`ustack_value`).
    StackId(u8),
    /// `ustack(n)`: the current user stack's ID in the user stack map of
    /// depth n (n, or ustackframes), with the process ID and n packed in
    /// (`ustack_value`).
    UStackId(u8),
    /// `xlate<T>(input)`: only its members are values (sema replaces
    /// `xlate<T>(e)->m` with the translator's expression for m), so codegen
    /// never sees one.
    Xlate {
        translator: usize,
        input: Box<TExpr>,
    },
    /// A whole translated struct (`out = xlate <struct T> (in)`): `size`
    /// zeroed bytes of scratch memory with each member the translator
    /// defines stored at its offset (strings into their char arrays); the
    /// value is the buffer's address.
    TranslatedStruct {
        size: usize,
        /// (offset, bytes, value) of each member.
        members: Vec<(usize, usize, TExpr)>,
    },
    /// progenyof(pid): whether the current process is pid or descends from
    /// it, walking task_struct.real_parent (offsets from the kernel's BTF).
    Progenyof {
        pid: Box<TExpr>,
        parent_offset: usize,
        tgid_offset: usize,
    },
    /// d_path(struct path *): the path's absolute name, walking dentries up
    /// and crossing mounts (offsets from the kernel's BTF); with
    /// `mount_point`, the name of the path's mount point instead.
    DPath {
        path: Box<TExpr>,
        /// Boxed: every expression node is as large as the largest kind.
        offsets: Box<DPathOffsets>,
        mount_point: bool,
    },
}

/// Where d_path's walk finds what it reads, in the running kernel's structs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DPathOffsets {
    pub path_mnt: usize,
    pub path_dentry: usize,
    pub vfsmount_root: usize,
    /// struct mount's embedded struct vfsmount (container_of).
    pub mount_mnt: usize,
    pub mount_parent: usize,
    pub mount_mountpoint: usize,
    pub dentry_parent: usize,
    /// d_name.len and d_name.name.
    pub dentry_name_len: usize,
    pub dentry_name: usize,
}

/// D subroutines (strings are NUL-terminated, at most strsize bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subr {
    Strlen,
    Strjoin,
    /// substr(s, index[, length]): the second argument is optional.
    Substr,
    Toupper,
    Tolower,
    Basename,
    Dirname,
    Strchr,
    Strrchr,
    /// strstr(s, subs): the rest of s from the first subs.
    Strstr,
    /// index(s, subs[, start]) / rindex(...): the first (last) position of
    /// subs at or after (before) start, or -1.
    Index,
    Rindex,
    /// strtok(s, delim): the next token; strtok(NULL, delim) goes on where
    /// the previous call of this probe firing stopped.
    Strtok,
    /// cleanpath(s): s without "//", "/./" and "dir/..", as illumos does it.
    Cleanpath,
    Lltostr,
    /// strtoll(s[, base]): the integer s starts with (after blanks, a sign
    /// and, in base 16, a 0x), in base 2..36 (default 10), as illumos'
    /// dtrace_strtoll reads it; another base is an illegal-operation fault.
    Strtoll,
    /// json(text, selector): the value the selector names in a JSON
    /// object or array, as text; NULL when there is none.
    Json,
    /// htons/ntohs (16), htonl/ntohl (32), htonll/ntohll (64) bits.
    ByteSwap(i32),
    /// `uregs[i]`: a user register of the current thread (d-library/regs.d
    /// names the words).
    Uregs(UregsWord),
    Rand,
    Getmajor,
    Getminor,
    /// inet_ntoa(ipaddr_t *): the IPv4 address at a kernel pointer, dotted.
    InetNtoa,
    /// inet_ntoa6(in6_addr_t *): an IPv6 address as text (just the dotted
    /// quad of an IPv4-mapped or -compatible one).
    InetNtoa6,
    /// inet_ntop(af, addr): an AF_INET or AF_INET6 address as text.
    InetNtop,
    /// link_ntop(type, addr): an ARPHRD_ETHER (6-byte) or ARPHRD_INFINIBAND
    /// (20-byte) hardware address as colon-separated hex bytes.
    LinkNtop,
    /// copyin(uaddr, size): `size` bytes of the process's memory (at most
    /// `limit`) and a NUL, in a buffer that lives as long as the clause,
    /// as DTrace's scratch memory does: `offset` bytes into the clause's
    /// alloca() region (None: a statement's scratch slot, when the region
    /// has no room; `limit` is then strsize); the value is its address.
    Copyin {
        offset: Option<usize>,
        limit: usize,
    },
    /// The D library's `__dtrace_psargs(arg_start, arg_end)`: the current
    /// process's command line (at most 79 bytes), arguments joined by
    /// spaces, as psinfo_t's pr_psargs.
    Psargs,
    /// The D library's `__dtrace_psargs_of(pid, fallback)`: process `pid`'s
    /// command line as the runtime's table has it (for a process other than
    /// the current one), else `fallback`.
    PsargsOf,
    /// alloca(size): the address of `size` bytes (a constant) of this CPU's
    /// scratch memory, at `offset` in the clause's alloca region, zeroed.
    Alloca {
        offset: usize,
        size: usize,
    },
    /// bcopy(src, dest, size): kernel memory into alloca'd memory.
    Bcopy,
    /// copyinto(uaddr, size, dest): user memory into alloca'd memory.
    Copyinto,
    /// speculation(): a free speculation's ID, or 0 when none is free.
    Speculation,
    /// The index of an array of `len` elements computed at run time: the
    /// index itself, or dtrace-utils' index-out-of-bounds fault (`len` is
    /// one more where `&a[len]` may name the end).
    CheckedIndex(u64),
}

#[derive(Debug, Clone)]
pub(crate) enum TStmt {
    Expr(TExpr),
    /// `action` numbers the clause's data-recording actions from 0.
    Action {
        action: usize,
        kind: ActionKind,
    },
    If {
        cond: TExpr,
        then: Vec<TStmt>,
        otherwise: Vec<TStmt>,
    },
    /// speculate(id), commit(id) or discard(id): records nothing of its own.
    Speculation {
        op: SpecOp,
        id: TExpr,
    },
    /// `@name[keys] = func(args)`: updates the aggregation in the kernel;
    /// nothing crosses to user space.
    Aggregate {
        /// Index into `Program::aggregations`.
        agg: usize,
        keys: Vec<TExpr>,
        /// The value argument (absent for count()).
        value: Option<TExpr>,
        /// The optional increment of the quantize family (default 1).
        incr: Option<TExpr>,
    },
    Destructive(DestructiveOp),
}

/// Destructive actions (allowed with -w) that record nothing.
#[derive(Debug, Clone)]
pub(crate) enum DestructiveOp {
    /// raise(sig), stop(): a signal to the current process.
    Signal(TExpr),
    /// copyout(buf, addr, nbytes): writes `nbytes` of alloca() memory at
    /// `buf` to user memory at `addr`.
    CopyOut { buf: TExpr, addr: TExpr, size: TExpr },
    /// copyoutstr(str, addr, maxlen): writes the string and its NUL, at
    /// most `max` bytes, to user memory at `addr`.
    CopyOutStr { text: TExpr, addr: TExpr, max: TExpr },
    /// chill(ns): spins on the CPU for `ns` nanoseconds.
    Chill(TExpr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecOp {
    /// The clause's record goes to the speculation instead of the output.
    Speculate,
    /// The speculation's records are printed, in order, and it is freed.
    Commit,
    /// The speculation's records are dropped and it is freed.
    Discard,
}

#[derive(Debug, Clone)]
pub(crate) enum ActionKind {
    /// Records the values; the record's `RecordKind` says what the consumer does with them.
    Record(Vec<TExpr>),
    /// Records the status and stops tracing.
    Exit(TExpr),
}

/// How an action's data sits in a record, for the consumer.
#[derive(Debug, Clone)]
pub(crate) struct ActionLayout {
    pub kind: RecordKind,
    /// Byte offset of the action's first value in the record.
    pub offset: usize,
    pub values: Vec<ValueLayout>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordKind {
    Trace,
    /// `stack()` as an action: prints the stack.
    Stack,
    /// print(): the value with its type, as DTrace prints it.
    Print(PrintNode),
    /// print() of a pointer to a struct or union: the address and what it
    /// points to, member by member, as dtrace-utils prints them.
    PrintPointee(PrintNode),
    /// Index into `Program::formats`.
    Printf(usize),
    /// system(): the formatted command (index into `Program::formats`) runs in /bin/sh.
    System(usize),
    /// freopen(): output goes to the file the formatted path names (index
    /// into `Program::formats`), appended to, or back to the original
    /// output for "".
    Freopen(usize),
    /// ftruncate(): empties the output file.
    Ftruncate,
    Exit,
    /// printa(): prints the aggregations (indices into `Program::aggregations`)
    /// with a format, or in the default layout.
    Printa {
        format: Option<usize>,
        aggs: Vec<usize>,
    },
    /// trunc(@, n): keeps the n highest (n < 0: lowest) entries; with no value, removes all.
    Trunc(usize),
    Clear(usize),
    /// normalize(@, n): the value is the normalization factor.
    Normalize(usize),
    Denormalize(usize),
    /// tracemem(addr, size[, dsize]): `size` bytes copied from addr, then
    /// the optional dynamic size (how many of them to print).
    Tracemem {
        size: usize,
    },
    /// setopt("name"[, "value"]): changes a consumer option at run time.
    Setopt {
        name: String,
        value: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueLayout {
    /// An 8-byte slot holding an integer of this size and signedness.
    Int { size: u8, signed: bool },
    /// An 8-byte slot holding the bits of a float (4) or double (8).
    Float { size: u8 },
    /// A NUL-terminated string of at most `strsize` bytes.
    Str,
    /// A kernel stack: its ID in the stack map (8 bytes).
    Stack,
    /// A symbol-typed address, after the pid for a user one.
    Symbol(SymbolKind),
    /// This many bytes of kernel memory, copied from the value's address.
    Memory(usize),
    /// The value (an address, 8 bytes), then this many bytes copied from it.
    Pointee(usize),
}

impl ValueLayout {
    /// The bytes DTrace's record holds for the value: integers and floats
    /// at their size, strings at the strsize option, a stack or symbol as addresses.
    pub(crate) fn dtrace_bytes(&self, max_strlen: usize) -> usize {
        match self {
            ValueLayout::Int { size, .. } | ValueLayout::Float { size } => usize::from(*size),
            ValueLayout::Stack => 8,
            ValueLayout::Symbol(kind) => kind.recorded_bytes(),
            ValueLayout::Str => max_strlen,
            ValueLayout::Memory(n) => *n,
            ValueLayout::Pointee(n) => 8 + *n,
        }
    }

    pub(crate) fn bytes(&self, strsize: usize) -> usize {
        match self {
            ValueLayout::Int { .. } | ValueLayout::Float { .. } | ValueLayout::Stack => 8,
            ValueLayout::Symbol(kind) => kind.recorded_bytes(),
            ValueLayout::Str => (strsize + 7) & !7,
            ValueLayout::Memory(n) => (n + 7) & !7,
            ValueLayout::Pointee(n) => 8 + ((n + 7) & !7),
        }
    }
}

impl Clause {
    /// The size DTrace gives the clause's record, which its buffer size is
    /// checked against and the fill and ring policies count (Solaris'
    /// dte_needed): the record's 4-byte EPID, then each value at its size
    /// and alignment; exit() records its 4-byte status.
    pub(crate) fn dtrace_record_size(&self, max_strlen: usize) -> usize {
        if !self.records {
            return 0;
        }
        let mut size: usize = 4;
        for action in &self.actions {
            let values: Vec<usize> = match action.kind {
                RecordKind::Exit => vec![4],
                _ => action.values.iter().map(|v| v.dtrace_bytes(max_strlen)).collect(),
            };
            for bytes in values {
                let align = bytes.clamp(1, 8).next_power_of_two().min(8);
                size = size.next_multiple_of(align) + bytes;
            }
        }
        size
    }
}

/// One clause, enabled on a set of probes: an ECB in DTrace's terms.
#[derive(Debug, Clone)]
pub(crate) struct Clause {
    /// Enabled probe ID (1-based), written in every record of the clause.
    pub epid: u32,
    /// Its first probe description as dtrace_desc2str() shows it, all
    /// four fields (`:::BEGIN`).
    pub desc: String,
    pub probes: Vec<u32>,
    pub predicate: Option<TExpr>,
    pub body: Vec<TStmt>,
    pub actions: Vec<ActionLayout>,
    /// Bytes of action data after the record header; 0 when nothing is recorded.
    pub record_size: usize,
    /// True when the clause writes a record (it has data-recording actions or is empty).
    pub records: bool,
    /// The clause calls speculate(): its record may go to a speculation or nowhere.
    pub speculates: bool,
    /// Where the presence bits of actions past the header's 64 are: words
    /// at the end of the record (0 when the clause has at most 64 actions).
    pub more_present_bits: usize,
    /// The bytes of alloca() memory the clause reserves (a pointer into the
    /// region past them, or from another clause's, is no longer valid).
    pub alloca_bytes: usize,
    /// Its descriptions whose provider is a glob (`python*:::entry`): kept
    /// for USDT providers of processes that start after tracing began, as
    /// DTrace's enablings are retained.
    pub retained: Vec<crate::provider::desc::ProbeDesc>,
}

impl Clause {
    /// (record offset of the 64-bit word, bit) that says action `action`
    /// ran: an action under an `if` may not have.
    pub(crate) fn present_bit(&self, action: usize) -> (usize, u32) {
        match action.checked_sub(64) {
            None => (crate::defs::layout::HDR_PRESENT, action as u32),
            Some(more) => (self.more_present_bits + 8 * (more / 64), (more % 64) as u32),
        }
    }

    /// The words of presence bits past the header's.
    pub(crate) fn more_present_words(&self) -> usize {
        Self::present_words_past_header(self.actions.len())
    }

    /// The words of presence bits past the header's that `actions` need.
    pub(crate) fn present_words_past_header(actions: usize) -> usize {
        actions.saturating_sub(64).div_ceil(64)
    }
}

pub(crate) use crate::defs::agg::AggFunc;

/// An aggregation (`@name`): a per-CPU hash map in the kernel from key tuple
/// to the function's running state, merged by the consumer.
#[derive(Debug, Clone)]
pub(crate) struct Aggregation {
    /// Without the `@`; empty for the anonymous aggregation.
    pub name: String,
    pub func: AggFunc,
    /// One per key column, in order.
    pub keys: Vec<KeyColumn>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyColumn {
    pub ty: Type,
    /// Bytes the column occupies in the map key (8 for integers; for strings
    /// the longest any update can store, NUL included, rounded to 8).
    pub bytes: usize,
}

impl Aggregation {
    /// Bytes of the map key; a keyless aggregation uses one zero word.
    pub(crate) fn key_size(&self) -> usize {
        key_size(&self.keys)
    }

    /// Byte offset of each key column in the map key.
    pub(crate) fn key_offsets(&self) -> Vec<usize> {
        key_offsets(&self.keys)
    }

    /// A keyless aggregation (`@x = f()`) is a one-entry per-CPU array:
    /// its lookup is inlined by the verifier and needs no insertion.
    pub(crate) fn is_array(&self) -> bool {
        self.keys.is_empty()
    }

    /// 64-bit words of the map value: the function's state, then for an
    /// array one word that is 1 once updated (an array entry always exists,
    /// and DTrace prints nothing for an aggregation never updated).
    pub(crate) fn map_value_words(&self) -> usize {
        self.value_words() + usize::from(self.is_array())
    }

    /// 64-bit words of the state the function keeps per CPU.
    pub(crate) fn value_words(&self) -> usize {
        self.func.state_words()
    }
}

impl AggFunc {
    /// 64-bit words of the state this function keeps per CPU.
    pub(crate) fn state_words(&self) -> usize {
        match self {
            AggFunc::Count | AggFunc::Sum => 1,
            // [number of values, extremum]: the count tells an unset CPU from a zero.
            AggFunc::Min | AggFunc::Max => 2,
            AggFunc::Avg => 2,
            // [count, sum, sum of squares (128 bits, low word first)]
            AggFunc::Stddev => 4,
            // [each bucket's count, ..., the sum of the values] (the sum
            // for the metrics file's histograms).
            AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => {
                self.bucket_count().unwrap_or(0).saturating_add(1)
            }
        }
    }
}

/// An associative array (`a[k] = v`, `self->a[k] = v`): a BPF hash map
/// from the key tuple (with the thread ID first for `self->`) to the value.
#[derive(Debug, Clone)]
pub(crate) struct AssocArray {
    pub name: String,
    pub thread_local: bool,
    /// The key columns, the thread ID column included for `self->`.
    pub keys: Vec<KeyColumn>,
    pub value: Type,
    /// Declared with its types: stores narrow, as Variable::declared says.
    pub declared: bool,
}

impl AssocArray {
    pub(crate) fn key_size(&self) -> usize {
        key_size(&self.keys)
    }
}

/// Bytes of a map key made of `columns`; an empty tuple uses one zero word.
pub(crate) fn key_size(columns: &[KeyColumn]) -> usize {
    columns.iter().map(|k| k.bytes).sum::<usize>().max(8)
}

/// Byte offset of each column in the map key.
pub(crate) fn key_offsets(columns: &[KeyColumn]) -> Vec<usize> {
    let mut at = 0;
    columns
        .iter()
        .map(|k| {
            let o = at;
            at += k.bytes;
            o
        })
        .collect()
}

#[derive(Debug, Clone)]
pub(crate) struct Variable {
    pub name: String,
    pub ty: Type,
    /// Declared with its type (`int x;`): a store narrows the value to the
    /// type, as dtrace-utils' declared variables do. A variable typed by
    /// its first assignment holds all 64 bits (arithmetic/tst.basics).
    pub declared: bool,
    /// Byte offset in the globals map value (globals only).
    pub offset: usize,
}

impl Variable {
    /// Bytes and alignment of the variable's storage: C's natural
    /// alignment, structs and unions on 8 bytes, as DTrace lays its
    /// variables out (dtrace-utils' variables/*/tst.alignment-*). A scalar
    /// typed by its first assignment holds all 64 bits, so takes 8.
    pub(crate) fn storage(&self, strsize: usize) -> (usize, usize) {
        match &self.ty {
            Type::String => (strsize, 1),
            Type::Struct(r) => (r.size, 8),
            Type::Array(..) => (self.ty.fixed_size().unwrap_or(8), self.ty.alignment()),
            Type::Int { size, .. } if self.declared => (*size as usize, *size as usize),
            _ => (8, 8),
        }
    }
}

/// Offsets of `vars` laid out one after another, each at its alignment,
/// and the bytes they take (a multiple of 8, for word-wise copies).
pub(crate) fn lay_out<'a>(vars: impl Iterator<Item = &'a Variable>, strsize: usize) -> (Vec<usize>, usize) {
    let mut end = 0usize;
    let offsets = vars
        .map(|v| {
            let (size, align) = v.storage(strsize);
            let at = end.next_multiple_of(align.max(1));
            end = at + size;
            at
        })
        .collect();
    (offsets, end.next_multiple_of(8))
}

/// Where the clause-local variables are: scalars in an area of the stack,
/// strings, structs and arrays in one of the scratch map, each laid out
/// by `lay_out` in order of declaration.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClauseLocalLayout {
    /// Each variable's offset in its area.
    pub offsets: Vec<usize>,
    pub stack_bytes: usize,
    pub scratch_bytes: usize,
}

impl ClauseLocalLayout {
    pub(crate) fn new(vars: &[Variable], strsize: usize) -> ClauseLocalLayout {
        let in_scratch = |v: &Variable| v.ty.by_reference_size(strsize).is_some();
        let (scalars, stack_bytes) = lay_out(vars.iter().filter(|v| !in_scratch(v)), strsize);
        let (by_reference, scratch_bytes) = lay_out(vars.iter().filter(|v| in_scratch(v)), strsize);
        let (mut scalars, mut by_reference) = (scalars.into_iter(), by_reference.into_iter());
        let offsets = vars
            .iter()
            .map(|v| if in_scratch(v) { by_reference.next() } else { scalars.next() }.unwrap_or(0))
            .collect();
        ClauseLocalLayout { offsets, stack_bytes, scratch_bytes }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    pub clauses: Vec<Clause>,
    pub globals: Vec<Variable>,
    pub thread_locals: Vec<Variable>,
    pub clause_locals: Vec<Variable>,
    /// String constants, without their terminating NUL.
    pub strings: Vec<Vec<u8>>,
    pub formats: Vec<crate::defs::printf_format::Format>,
    pub aggregations: Vec<Aggregation>,
    pub assoc_arrays: Vec<AssocArray>,
    /// Bytes of a string's buffer: max_strlen characters and the NUL.
    pub strsize: usize,
    /// The strsize option: the most characters a string holds.
    pub max_strlen: usize,
    pub uses_ppid: bool,
    /// `caller` / `ucaller` is read: the entry programs walk the stacks.
    pub uses_caller: bool,
    pub uses_ucaller: bool,
    /// Some clause reads arg0..arg9: entry programs must copy the arguments.
    pub uses_args: bool,
    /// The depths (frames) of the `stack()`s clauses record: one stack map
    /// each, so that stacks equal in their first n frames share one ID (and
    /// one aggregation key).
    pub stack_depths: std::collections::BTreeSet<u8>,
    /// The same for `ustack()`.
    pub ustack_depths: std::collections::BTreeSet<u8>,
    pub uses_probe_names: bool,
    /// The most alloca() memory any clause reserves.
    pub alloca_bytes: usize,
    /// Whether `stackdepth` is used: the scratch map then ends with a
    /// buffer for the stack (`STACK_BUFFER_BYTES`).
    pub uses_stackdepth: bool,
    /// Whether `vtimestamp` is used: the runtime then keeps per-thread CPU
    /// time at every context switch.
    pub uses_vtimestamp: bool,
    /// curcpu is used, or a cpu_t or cpuinfo_t is read (a member, print()):
    /// the runtime describes the CPUs in `dt_cpuinfo`.
    pub uses_cpuinfo: bool,
    /// Reads pr_psargs of a process other than the current one: the runtime
    /// keeps a table of command lines.
    pub uses_psargs_table: bool,
    /// Some clause calls strtok(): each firing starts with no saved position.
    /// uregs[] is read: the kernel must have bpf_task_pt_regs.
    pub uses_uregs: bool,
    pub uses_strtok: bool,
    /// json() is called: its machine's variables need scratch memory.
    pub uses_json: bool,
    /// chill() is called: its wait may run as a bpf_loop() callback.
    pub uses_chill: bool,
    /// The largest struct translated whole (its scratch buffer), or 0.
    pub translated_struct_bytes: usize,
    /// Some clause takes a destructive action: tracing needs -w.
    pub destructive: bool,
    /// Why tracing cannot be enabled although the program compiles: an
    /// action Linux cannot take (panic(), breakpoint(), chill()).
    pub unavailable: Option<String>,
    /// The probe descriptions (as written) of clauses that call return().
    pub return_overrides: Vec<String>,
    /// (probe ID, n) for every typed `args[n]` a clause of that probe uses:
    /// entry programs fill costly arguments (io's fileinfo_t) only if used.
    pub typed_args_used: std::collections::BTreeSet<(u32, usize)>,
    /// (probe ID, n) to the members of the struct typed `args[n]` points
    /// to that clauses read as `args[n]->member`; None where `args[n]` is
    /// used any other way (any member may be read). io's entry program
    /// skips reading what bufinfo_t's unread members need.
    pub typed_arg_members: std::collections::BTreeMap<(u32, usize), Option<std::collections::BTreeSet<String>>>,
}

impl Program {
    /// The enabled probe ID DTrace shows for clause `epid` (numbered from
    /// 1 in script order here), as dtrace-utils numbers them when it links
    /// one program per probe: 1 is dtrace's own enabling of ERROR, then
    /// come the clauses of the ERROR probe (`error_probe`), then those of
    /// BEGIN, then END, then the others, each group in script order
    /// (error/tst.errorend: ERROR, END and BEGIN clauses, BEGIN's is 3).
    /// Fault messages, ERROR's arg1 and `epid` show it.
    pub(crate) fn shown_epid(&self, epid: u32, error_probe: u32) -> u32 {
        let Some(clause) = self.clauses.get((epid as usize).wrapping_sub(1)) else { return epid };
        let key = |index: usize, c: &Clause| (Self::epid_group(c, error_probe), index);
        let own = key(epid as usize - 1, clause);
        let before = self.clauses.iter().enumerate().filter(|(i, c)| key(*i, c) < own).count();
        before as u32 + 2
    }

    /// The group of `shown_epid`: 0 for ERROR's clauses, the probe ID for
    /// BEGIN's (1) and END's (2), which the registry numbers first, just
    /// below ERROR, and `error_probe` for every other clause.
    fn epid_group(clause: &Clause, error_probe: u32) -> u32 {
        if clause.probes.contains(&error_probe) {
            return 0;
        }
        clause.probes.iter().copied().filter(|&id| id < error_probe).min().unwrap_or(error_probe)
    }

    /// The number a fault in clause `epid` shows as "action #N" and gives
    /// ERROR as arg2, as dtrace-utils numbers it (the clause ID of its
    /// per-probe program): the clause's place, from 1, among the clauses
    /// that enable one of its probes, in the predicate too
    /// (error/tst.errorend: an END clause before the faulting BEGIN
    /// clause, "action #1").
    pub(crate) fn statement_id(&self, epid: u32) -> u32 {
        let upto = (epid as usize).min(self.clauses.len());
        let Some(clause) = upto.checked_sub(1).map(|i| &self.clauses[i]) else { return 0 };
        let its_probes: std::collections::HashSet<u32> = clause.probes.iter().copied().collect();
        self.clauses[..upto].iter().filter(|c| c.probes.iter().any(|p| its_probes.contains(p))).count() as u32
    }

    /// The room END's records take in a fill buffer (the Guide's "fill
    /// Policy and END Probes"): the sizes of the clauses of probe `end`.
    pub(crate) fn end_reserve(&self, end: u32) -> usize {
        self.clauses.iter().filter(|c| c.probes.contains(&end)).map(|c| c.dtrace_record_size(self.max_strlen)).sum()
    }

    pub(crate) fn uses_stack(&self) -> bool {
        !self.stack_depths.is_empty()
    }

    /// stack() or stackdepth: kernel stacks whose machinery frames are left out.
    pub(crate) fn uses_kernel_stack(&self) -> bool {
        self.uses_stack() || self.uses_stackdepth
    }

    pub(crate) fn uses_ustack(&self) -> bool {
        !self.ustack_depths.is_empty()
    }

    /// Bytes of the globals map's one value: every global variable at its
    /// `offset` (`lay_out`).
    pub(crate) fn globals_bytes(&self) -> usize {
        lay_out(self.globals.iter(), self.strsize).1
    }

    pub(crate) fn clause_local_layout(&self) -> ClauseLocalLayout {
        ClauseLocalLayout::new(&self.clause_locals, self.strsize)
    }
}

/// How a ustack() value is packed in a stack-typed word (stack() values
/// are the plain stack ID): bit 62 marks a user stack, bits 54-61 hold the
/// depth (the stack map it is in), bits 32-53 the process ID (pid_max is at most
/// 2^22), bits 0-31 the ID in the user stack map. A failed capture is the
/// helper's negative error, as for stack().
pub(crate) mod ustack_value {
    pub const USER: u64 = 1 << 62;
    pub const FRAMES_SHIFT: u32 = 54;
    pub const PID_SHIFT: u32 = 32;
    pub const PID_MASK: u64 = (1 << 22) - 1;
    /// The most frames a stack map may hold: the kernel's default
    /// perf_event_max_stack (a stack map deeper than the sysctl is refused).
    pub const MAX_FRAMES: u8 = 127;

    /// (depth, stack ID) of a kernel stack value: the ID with the depth
    /// of stack(n) packed above it.
    pub fn decode_kernel(value: u64) -> (u32, u32) {
        (((value >> FRAMES_SHIFT) & 0xff) as u32, value as u32)
    }

    /// (pid, depth, stack ID) of a user stack value.
    pub fn decode(value: u64) -> Option<(u32, u32, u32)> {
        if value & USER == 0 || (value as i64) < 0 {
            return None;
        }
        let frames = ((value >> FRAMES_SHIFT) & 0xff) as u32;
        Some((((value >> PID_SHIFT) & PID_MASK) as u32, frames, value as u32))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn packs_pid_frames_and_id() {
            // As the generated code packs it (codegen ustack_id).
            let value = USER | (5 << FRAMES_SHIFT) | (4_194_303 << PID_SHIFT) | 16383;
            assert_eq!(decode(value), Some((4_194_303, 5, 16383)));
            assert_eq!(decode(USER | (1234 << PID_SHIFT)), Some((1234, 0, 0)));
            // A kernel stack ID, or the helper's error, is no user stack.
            assert_eq!(decode(17), None);
            assert_eq!(decode(-14i64 as u64), None);
        }
    }
}
