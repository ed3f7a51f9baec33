//! The maps generated code refers to, by role. Instructions carry a
//! `MapRef` in the immediate of their map loads (BPF_PSEUDO_MAP_FD and
//! BPF_PSEUDO_MAP_VALUE); the loader replaces it with the file descriptor
//! of the map it created for that role (`patch_maps`). So code generation
//! needs no map and no privilege: it runs as part of `compile`, and
//! `dtrace -e` sees every error it finds.

use super::insn::Insn;

/// One map of the generated code. Indexed roles (a thread-local variable,
/// an aggregation, an associative array) carry their index in the
/// program's list of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum MapRef {
    /// The per-CPU probe context the entry programs fill (shared).
    Ctx,
    /// The ring buffer of records for the consumer (shared).
    Events,
    /// The tracing state: draining, wall-clock offset (shared).
    State,
    /// Records lost to a full ring buffer, per CPU (shared).
    Drops,
    /// All global variables, one array value.
    Globals,
    /// All string constants, each padded to strsize.
    Strings,
    /// The per-CPU string scratch area (`ScratchLayout`).
    Scratch,
    /// Probe ID → provider, module, function and name strings.
    ProbeNames,
    /// The hash map of thread-local variable `n`, keyed by thread ID.
    ThreadLocal(usize),
    /// The per-CPU hash map of aggregation `n`.
    Aggregation(usize),
    /// Where keys too large for the stack are built.
    AggKey,
    /// The hash map of associative array `n`.
    Assoc(usize),
    /// Kernel stacks of n frames for stack(n).
    Stacks(u8),
    /// User stacks of n frames for ustack(n).
    UserStacks(u8),
    /// One zero-filled value as large as the largest aggregation's.
    AggZero,
    /// Aggregation updates lost to a full map, per CPU (shared).
    AggDrops,
    /// Dynamic variable stores lost to a full map, per CPU (shared).
    DynDrops,
    /// Faults in ERROR clauses, per CPU (shared).
    DblErrors,
    /// Per-thread on-CPU time for vtimestamp (shared).
    Vtime,
    /// Each CPU's cpu_t and cpuinfo_t (shared).
    CpuInfo,
    /// Command lines by process ID, for pr_psargs (shared).
    Psargs,
    /// Speculations by ID, the free IDs, the count being ended and the
    /// per-CPU troubles (shared).
    Specs,
    SpecFree,
    SpecEnding,
    SpecStats,
    /// The next part of a probe's clauses split over several programs
    /// (a program array, one per program type).
    Chain,
    /// The record of a clause split between programs, built over its parts
    /// (per CPU; `emit::SPLIT_RECORD_START`).
    SplitRecord,
}

/// Roles with an index keep it in the low 16 bits of the symbol.
const INDEX_BITS: u32 = 16;

impl MapRef {
    const FIXED: [MapRef; 22] = [
        MapRef::Ctx,
        MapRef::Events,
        MapRef::State,
        MapRef::Drops,
        MapRef::Globals,
        MapRef::Strings,
        MapRef::Scratch,
        MapRef::ProbeNames,
        MapRef::AggKey,
        MapRef::AggZero,
        MapRef::AggDrops,
        MapRef::Vtime,
        MapRef::Specs,
        MapRef::SpecFree,
        MapRef::SpecEnding,
        MapRef::SpecStats,
        MapRef::DynDrops,
        MapRef::DblErrors,
        MapRef::CpuInfo,
        MapRef::Psargs,
        MapRef::Chain,
        MapRef::SplitRecord,
    ];

    /// The most thread-local variables, aggregations or associative arrays
    /// of one kind a program may have.
    pub(crate) const MAX_INDEX: usize = (1 << INDEX_BITS) - 1;

    /// The value an instruction's immediate carries for this map.
    pub(crate) fn symbol(self) -> i32 {
        let (kind, index) = match self {
            MapRef::ThreadLocal(n) => (1, n),
            MapRef::Aggregation(n) => (2, n),
            MapRef::Assoc(n) => (3, n),
            MapRef::Stacks(n) => (5, usize::from(n)),
            MapRef::UserStacks(n) => (6, usize::from(n)),
            // A role missing from FIXED would silently alias another map.
            fixed => (4, Self::FIXED.iter().position(|m| *m == fixed).expect("every fixed map role is in FIXED")),
        };
        debug_assert!(index <= Self::MAX_INDEX);
        ((kind << INDEX_BITS) | (index & Self::MAX_INDEX)) as i32
    }

    pub(crate) fn from_symbol(symbol: i32) -> Option<MapRef> {
        let index = symbol as usize & Self::MAX_INDEX;
        match symbol as u32 >> INDEX_BITS {
            1 => Some(MapRef::ThreadLocal(index)),
            2 => Some(MapRef::Aggregation(index)),
            3 => Some(MapRef::Assoc(index)),
            4 => Self::FIXED.get(index).copied(),
            5 => u8::try_from(index).ok().map(MapRef::Stacks),
            6 => u8::try_from(index).ok().map(MapRef::UserStacks),
            _ => None,
        }
    }
}

/// The maps a program's instructions refer to, in order of first use.
pub(crate) fn maps_used(insns: &[Insn]) -> Vec<MapRef> {
    let mut used = Vec::new();
    for (_, symbol) in map_loads(insns) {
        if let Some(m) = MapRef::from_symbol(symbol) {
            if !used.contains(&m) {
                used.push(m);
            }
        }
    }
    used
}

/// Replaces every map load's `MapRef` with the descriptor `fd_of` gives
/// for it. Fails on a role `fd_of` has no map for.
pub(crate) fn patch_maps(insns: &mut [Insn], fd_of: &dyn Fn(MapRef) -> Option<i32>) -> Result<(), String> {
    let at: Vec<(usize, i32)> = map_loads(insns).collect();
    for (pc, symbol) in at {
        let map = MapRef::from_symbol(symbol).ok_or_else(|| format!("internal error: bad map reference {symbol}"))?;
        insns[pc].imm = fd_of(map).ok_or_else(|| format!("internal error: no map for {map:?}"))?;
    }
    Ok(())
}

/// (index, symbol) of each map-loading instruction.
fn map_loads(insns: &[Insn]) -> impl Iterator<Item = (usize, i32)> + '_ {
    let mut pc = 0;
    std::iter::from_fn(move || {
        while pc < insns.len() {
            let i = insns[pc];
            if i.is_ld_imm64() {
                pc += 2;
                if i.loads_map() {
                    return Some((pc - 2, i.imm));
                }
            } else {
                pc += 1;
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::insn::{exit, ld_map_fd, ld_map_value, mov_imm, R1, R2};

    #[test]
    fn maps_symbols_round_trip() {
        for m in MapRef::FIXED.into_iter().chain([
            MapRef::ThreadLocal(3),
            MapRef::Aggregation(0),
            MapRef::Assoc(9),
            MapRef::Stacks(20),
            MapRef::UserStacks(127),
        ]) {
            assert_eq!(MapRef::from_symbol(m.symbol()), Some(m));
        }
        assert_eq!(MapRef::from_symbol(0), None);
    }

    #[test]
    fn maps_patching_replaces_only_map_loads() {
        let mut insns = Vec::new();
        insns.extend(ld_map_fd(R1, MapRef::Aggregation(2)));
        insns.push(mov_imm(R2, MapRef::Ctx.symbol()));
        insns.extend(ld_map_value(R2, MapRef::Globals, 16));
        insns.push(exit());
        assert_eq!(maps_used(&insns), vec![MapRef::Aggregation(2), MapRef::Globals]);
        let fd_of = |m: MapRef| match m {
            MapRef::Aggregation(2) => Some(7),
            MapRef::Globals => Some(8),
            _ => None,
        };
        patch_maps(&mut insns, &fd_of).unwrap();
        assert_eq!((insns[0].imm, insns[2].imm, insns[3].imm, insns[4].imm), (7, MapRef::Ctx.symbol(), 8, 16));
        let mut stack = ld_map_fd(R1, MapRef::Stacks(20)).to_vec();
        assert!(patch_maps(&mut stack, &fd_of).is_err());
    }
}
