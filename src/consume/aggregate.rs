//! The consumer's side of aggregations: reads the kernel's per-CPU maps,
//! merges the CPUs' partial results (DTrace's "apply the function to the
//! parts, then to the partial results"), sorts, and carries out printa(),
//! trunc(), clear(), normalize() and the printing at exit.
//!
//! The text itself comes from `aggfmt`, which reproduces DTrace's layouts.

use std::cell::RefCell;
use std::collections::HashMap;

use libbpf_rs::{MapCore, MapFlags};

use super::aggfmt::{self, AggData, Drawing, PrintaValue};
use super::ksyms::Symbols;
use super::printf::{self, Value};
use super::{json, metrics};
use crate::defs::agg::AggFunc;
use crate::defs::layout::read_u64;
use crate::defs::printf_format::Format;
use crate::flags::{AggDisplayOptions, AggSortOptions, Encoding};
use crate::runtime::Session;
use crate::sema::ir::{Aggregation, Program, SymbolKind, Type};

/// One key of one aggregation, with its CPUs merged.
#[derive(Clone)]
struct Entry {
    key: Vec<u8>,
    data: AggData,
    /// The keys of the kernel's map this entry merges when symbol columns
    /// made several one (Symbols::canonicalize); empty: `key` alone.
    /// (Boxed: one word per entry when there is none, of 10^6 entries.)
    merged_keys: Option<Box<Vec<Vec<u8>>>>,
}

impl Entry {
    /// The keys of the kernel's map this entry stands for.
    fn kernel_keys(&self) -> impl Iterator<Item = &[u8]> {
        let own = self.merged_keys.is_none().then_some(self.key.as_slice());
        own.into_iter().chain(self.merged_keys.iter().flat_map(|keys| keys.iter().map(Vec::as_slice)))
    }
}

/// A printa() row: the raw key and each aggregation's data.
type Row = (Vec<u8>, Vec<AggData>);

/// What the consumer keeps per aggregation between records.
pub(crate) struct Aggregations<'a> {
    program: &'a Program,
    session: &'a Session,
    /// normalize()'s factor, 1 when not normalized.
    normal: Vec<u64>,
    /// Printed by printa(): not printed again at exit, as in DTrace.
    printed: Vec<bool>,
    /// What each aggregation held when this record's actions first looked:
    /// trunc(), printa() and clear() of one clause see the same data, as
    /// DTrace's consumer works on a snapshot.
    cache: RefCell<Vec<Option<Vec<Entry>>>>,
    pub sort: AggSortOptions,
    /// agghist, aggpack, aggzoom and encoding, as set now.
    pub display: AggDisplayOptions,
    /// Kernel symbols, for stack() keys and the consumer's %a.
    pub symbols: Symbols<'a>,
}

impl<'a> Aggregations<'a> {
    pub(crate) fn new(
        program: &'a Program,
        session: &'a Session,
        sort: AggSortOptions,
        user: super::usyms::UserSymbols,
    ) -> Aggregations<'a> {
        let n = program.aggregations.len();
        Aggregations {
            program,
            session,
            normal: vec![1; n],
            printed: vec![false; n],
            cache: RefCell::new(vec![None; n]),
            sort,
            display: AggDisplayOptions::default(),
            symbols: Symbols::new(session, user),
        }
    }

    /// Forgets the snapshots: the next record's actions read the kernel again.
    pub(crate) fn begin_record(&mut self) {
        self.cache.get_mut().iter_mut().for_each(|c| *c = None);
    }

    /// Aggregation `index` as this record's actions see it.
    fn snapshot(&self, index: usize) -> Vec<Entry> {
        if let Some(entries) = &self.cache.borrow()[index] {
            return entries.clone();
        }
        let entries = self.read(index);
        self.cache.borrow_mut()[index] = Some(entries.clone());
        entries
    }

    /// Reads aggregation `index` from the kernel, all CPUs merged.
    fn read(&self, index: usize) -> Vec<Entry> {
        let agg = &self.program.aggregations[index];
        let words = agg.value_words();
        let symbol_columns: Vec<(usize, usize, SymbolKind)> = agg
            .keys
            .iter()
            .zip(agg.key_offsets())
            .filter_map(|(column, at)| match column.ty {
                Type::Symbol(kind) if kind != SymbolKind::UAddr => Some((at, column.bytes, kind)),
                _ => None,
            })
            .collect();
        let mut entries = Vec::new();
        // Keys whose symbol columns name the same function, by canonical key:
        // their per-CPU values are merged as one's.
        let mut grouped: HashMap<Vec<u8>, (Vec<Vec<u8>>, Vec<Vec<u8>>)> = HashMap::new();
        self.session.for_each_aggregation_entry(index, &mut |key, per_cpu| {
            // An array's entry exists once some CPU updated it.
            if agg.is_array() && per_cpu.iter().all(|cpu| word(cpu, words) == 0) {
                return;
            }
            if symbol_columns.is_empty() {
                entries.push(Entry { data: merge(&agg.func, per_cpu), key: key.to_vec(), merged_keys: None });
                return;
            }
            let mut canonical = key.to_vec();
            for &(at, bytes, kind) in &symbol_columns {
                if let Some(column) = canonical.get_mut(at..at + bytes) {
                    self.symbols.canonicalize(kind, column);
                }
            }
            let (keys, values) = grouped.entry(canonical).or_default();
            keys.push(key.to_vec());
            values.extend(per_cpu.iter().map(|cpu| cpu.to_vec()));
        });
        entries.extend(grouped.into_iter().map(|(key, (merged_keys, values))| Entry {
            data: merge(&agg.func, &values),
            key,
            merged_keys: Some(Box::new(merged_keys)),
        }));
        entries
    }

    /// Zeroes `key`'s value on every CPU; an array entry stays marked as
    /// updated when `touched` (clear) and disappears otherwise (trunc).
    fn write_all_cpus(&self, index: usize, key: &[u8], touched: bool) {
        let agg = &self.program.aggregations[index];
        let mut value = vec![0u8; agg.map_value_words() * 8];
        if agg.is_array() && touched {
            let at = agg.value_words() * 8;
            value[at..at + 8].copy_from_slice(&1u64.to_ne_bytes());
        }
        let cpus = libbpf_rs::num_possible_cpus().unwrap_or(1);
        let values = vec![value; cpus];
        let _ = self.session.aggregation_map(index).update_percpu(key, &values, MapFlags::EXIST);
    }

    /// printa(@a, ...) without a format: a newline, then the rows.
    pub(crate) fn print_default(&mut self, aggs: &[usize], out: &mut Vec<u8>) {
        out.push(b'\n');
        let rows = self.joined(aggs);
        let style = self.row_style(aggs, &rows);
        self.write_rows(aggs, &rows, style, true, out);
        self.mark_printed(aggs, &rows);
    }

    /// How bars are drawn now: zoomed (aggzoom), with UTF-8 blocks
    /// (encoding=utf8; for packed rows also encoding=auto on a terminal
    /// other than `sun`, `sun-color` or `dumb`, as dt_print_packed decides).
    fn drawing(&self, packed: bool) -> Drawing {
        let utf8 = match self.display.encoding {
            Encoding::Utf8 => true,
            Encoding::Ascii => false,
            Encoding::Auto => packed && !matches!(std::env::var("TERM").as_deref(), Ok("sun" | "sun-color" | "dumb")),
        };
        Drawing { zoom: self.display.zoom, utf8 }
    }

    /// The layout of one printing of `aggs`' rows: agghist bars for a
    /// count() or sum(), aggpack lines for a quantize() or lquantize()
    /// (each over all the rows, as dt_aggregate_total and
    /// dt_aggregate_minmaxbin compute it), else plain rows.
    fn row_style(&self, aggs: &[usize], rows: &[Row]) -> RowStyle {
        let [agg] = aggs else { return RowStyle::Plain };
        let func = &self.program.aggregations[*agg].func;
        if self.display.pack {
            if let Some(range) = aggfmt::PackedRange::of(func, rows.iter().filter_map(|(_, d)| d.first())) {
                return RowStyle::Pack(range);
            }
        }
        if self.display.hist && matches!(func, AggFunc::Count | AggFunc::Sum) {
            let values: Vec<i64> = rows
                .iter()
                .filter_map(|(_, d)| match d.first() {
                    Some(AggData::Scalar(v)) => Some(*v),
                    _ => None,
                })
                .collect();
            let (total, signs) = aggfmt::hist_total(&values, self.display.zoom);
            return RowStyle::Hist(total, signs);
        }
        RowStyle::Plain
    }

    /// Writes `rows` in `style`; a histogram's header comes before the
    /// first of them (`first`: the first chunk of its printing).
    fn write_rows(&self, aggs: &[usize], rows: &[Row], style: RowStyle, first: bool, out: &mut Vec<u8>) {
        let agg = &self.program.aggregations[aggs[0]];
        let packed = !matches!(style, RowStyle::Plain);
        let drawing = self.drawing(matches!(style, RowStyle::Pack(_)));
        if packed && first {
            if let Some((key, _)) = rows.first() {
                let width: usize = key_values(agg, key).iter().map(|k| aggfmt::packed_key_width(k) + 1).sum();
                match style {
                    RowStyle::Pack(range) => aggfmt::write_packed_header(&agg.func, range, width, out),
                    _ => aggfmt::write_hist_header(width, out),
                }
            }
        }
        for (key, datas) in rows {
            // stack() keys print as their frames (dt_print_stack), others as
            // DTrace's key columns.
            for (column, value) in agg.keys.iter().zip(key_values(agg, key)) {
                match (&column.ty, value) {
                    (Type::Stack, Value::Int { bits, .. }) => self.symbols.write_stack(bits, out),
                    (Type::Symbol(kind), Value::Str(record)) => {
                        out.extend(format!("  {:<50}", self.symbols.symbol_text(*kind, record)).as_bytes())
                    }
                    (_, v) if packed => aggfmt::write_packed_key(&v, out),
                    (_, v) => aggfmt::write_key(&v, out),
                }
            }
            match (style, datas.first()) {
                (RowStyle::Hist(total, signs), Some(AggData::Scalar(v))) => {
                    aggfmt::write_hist_value(*v, self.normal[aggs[0]], total, signs, out)
                }
                (RowStyle::Pack(range), Some(data)) => aggfmt::write_packed_value(&agg.func, data, range, drawing, out),
                _ => {
                    for (&a, data) in aggs.iter().zip(datas) {
                        let func = &self.program.aggregations[a].func;
                        aggfmt::write_value_drawn(func, data, self.normal[a], drawing, out);
                    }
                    out.push(b'\n');
                }
            }
        }
    }

    /// printa("format", @a, ...): the format once per row.
    pub(crate) fn print_formatted(&mut self, format: &Format, aggs: &[usize], out: &mut Vec<u8>) {
        let rows = self.joined(aggs);
        let drawing = self.drawing(false);
        let first = &self.program.aggregations[aggs[0]];
        for (key, datas) in &rows {
            let values: Vec<PrintaValue> = aggs
                .iter()
                .zip(datas)
                .map(|(&agg, data)| {
                    aggfmt::printa_value_drawn(&self.program.aggregations[agg].func, data, self.normal[agg], drawing)
                })
                .collect();
            let agg_values: Vec<Value> = values
                .iter()
                .map(|v| match v {
                    PrintaValue::Int(n) => Value::Int { bits: *n as u64, size: 8, signed: true },
                    PrintaValue::Text(t) => Value::Text(t),
                })
                .collect();
            // A stack key reaches %k as its stack ID record, as in printf.
            let values = key_values(first, key);
            let stack_ids: Vec<[u8; 8]> = values
                .iter()
                .map(|v| match v {
                    Value::Int { bits, .. } => bits.to_ne_bytes(),
                    _ => [0; 8],
                })
                .collect();
            let keys: Vec<Value> = first
                .keys
                .iter()
                .zip(values)
                .zip(&stack_ids)
                .map(|((c, v), id)| match (&c.ty, v) {
                    (Type::Stack, _) => Value::Str(id),
                    // printa's conversions (%a, %p) see the address.
                    (Type::Symbol(kind), Value::Str(record)) => {
                        Value::Int { bits: read_u64(record, kind.recorded_bytes() - 8), size: 8, signed: false }
                    }
                    (_, v) => v,
                })
                .collect();
            // %A names an address of the process the key was recorded in.
            let user_pid = first.keys.iter().zip(key_values(first, key)).find_map(|(c, v)| match (&c.ty, v) {
                (Type::Symbol(kind), Value::Str(record)) if kind.user() => Some(read_u64(record, 0) as u32),
                _ => None,
            });
            self.symbols.printa_pid.set(user_pid);
            printf::format_printa(format, &keys, &agg_values, &self.symbols, out);
            self.symbols.printa_pid.set(None);
        }
        self.mark_printed(aggs, &rows);
    }

    /// An aggregation printa() printed rows of is not printed again at exit.
    fn mark_printed(&mut self, aggs: &[usize], rows: &[Row]) {
        if !rows.is_empty() {
            for &a in aggs {
                self.printed[a] = true;
            }
        }
    }

    /// At exit: every aggregation printa() never printed, in order of
    /// definition (reversed by aggsortrev), one after the other, written to
    /// `sink` as it is formatted (10^6 rows are tens of MB of text).
    pub(crate) fn print_unprinted(&mut self, out: &mut Vec<u8>, sink: &mut dyn std::io::Write) {
        self.begin_record();
        let mut order: Vec<usize> = (0..self.program.aggregations.len()).filter(|&i| !self.printed[i]).collect();
        if self.sort.reverse {
            order.reverse();
        }
        for index in order {
            // Nothing acts on this data after it: read without a snapshot copy.
            let rows = self.joined_from(&[index], false);
            let style = self.row_style(&[index], &rows);
            for (i, chunk) in rows.chunks(4096).enumerate() {
                self.write_rows(&[index], chunk, style, i == 0, out);
                let _ = sink.write_all(out);
                out.clear();
            }
        }
    }

    /// The rows of a printa(): every key of any of `aggs`, each with every
    /// aggregation's data (zero where an aggregation lacks the key), sorted.
    fn joined(&self, aggs: &[usize]) -> Vec<Row> {
        self.joined_from(aggs, true)
    }

    /// `joined`, from this record's snapshots or (`snapshot` false, for a
    /// single aggregation) straight from the kernel's maps.
    fn joined_from(&self, aggs: &[usize], snapshot: bool) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        if let [agg] = aggs {
            let entries = if snapshot { self.snapshot(*agg) } else { self.read(*agg) };
            rows = entries.into_iter().map(|e| (e.key, vec![e.data])).collect();
        } else {
            let mut row_of: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
            for (i, &agg) in aggs.iter().enumerate() {
                for e in self.snapshot(agg) {
                    let row = *row_of.entry(e.key.clone()).or_insert_with(|| {
                        let empty = aggs.iter().map(|&a| empty_data(&self.program.aggregations[a].func)).collect();
                        rows.push((e.key, empty));
                        rows.len() - 1
                    });
                    rows[row].1[i] = e.data;
                }
            }
        }
        let first = &self.program.aggregations[aggs[0]];
        let funcs: Vec<&AggFunc> = aggs.iter().map(|&a| &self.program.aggregations[a].func).collect();
        // What most comparisons decide on, kept beside each row's index so
        // that sorting 10^6 rows does not chase pointers: the value's weight
        // (one aggregation, by value) and the first key column's integer.
        let by_weight = aggs.len() == 1 && !self.sort.by_key;
        // (The first key column decides first only where the key is the
        // first thing or the second after the one aggregation's value.)
        let first_int = matches!(first.keys.first().map(|k| &k.ty), Some(Type::Int { .. } | Type::Pointer(_)))
            && self.sort.key_position == 0
            && (by_weight || self.sort.by_key);
        // One integer key column decides every tie (keys are distinct):
        // then no key is decoded for the comparisons.
        let keys_decide = first_int && first.keys.len() == 1;
        // Keys decoded once, not at every comparison (10^6 rows make 2·10^7).
        let decoded: Vec<Vec<Value>> =
            if keys_decide { Vec::new() } else { rows.iter().map(|(key, _)| key_values(first, key)).collect() };
        let mut order: Vec<(aggfmt::Weight, u64, usize)> = rows
            .iter()
            .enumerate()
            .map(|(i, (key, datas))| {
                let weight = if by_weight { aggfmt::weight(funcs[0], &datas[0]) } else { Default::default() };
                let key = match first.keys.first().map(|k| &k.ty) {
                    Some(&Type::Int { size, .. }) if first_int => aggfmt::unsigned_of_size(read_u64(key, 0), size),
                    Some(Type::Pointer(_)) if first_int => read_u64(key, 0),
                    _ => 0,
                };
                (weight, key, i)
            })
            .collect();
        let reverse = self.sort.reverse;
        order.sort_unstable_by(|(wa, ka, a), (wb, kb, b)| {
            let quick = wa.cmp(wb).then(ka.cmp(kb));
            let quick = if reverse { quick.reverse() } else { quick };
            quick.then_with(|| match decoded.is_empty() {
                true => std::cmp::Ordering::Equal,
                false => {
                    aggfmt::compare_rows(&funcs, (&decoded[*a], &rows[*a].1), (&decoded[*b], &rows[*b].1), &self.sort)
                }
            })
        });
        drop(decoded);
        let order = order.into_iter().map(|(_, _, i)| i);
        let mut slots: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
        order.into_iter().filter_map(|i| slots[i].take()).collect()
    }

    /// printa() in structured output: `{"aggregation-data": [row, ...],
    /// "aggregation-name": name}` (see `json`).
    pub(crate) fn json_printa(&mut self, aggs: &[usize]) -> serde_json::Value {
        let rows = self.joined(aggs);
        let value = self.json_rows(aggs, &rows);
        self.mark_printed(aggs, &rows);
        value
    }

    /// -O at exit: each aggregation printa() never printed, as printa() would.
    pub(crate) fn json_unprinted(&mut self) -> Vec<serde_json::Value> {
        self.begin_record();
        let mut order: Vec<usize> = (0..self.program.aggregations.len()).filter(|&i| !self.printed[i]).collect();
        if self.sort.reverse {
            order.reverse();
        }
        order
            .into_iter()
            .filter_map(|index| {
                let rows = self.joined(&[index]);
                (!rows.is_empty()).then(|| self.json_rows(&[index], &rows))
            })
            .collect()
    }

    fn json_rows(&self, aggs: &[usize], rows: &[Row]) -> serde_json::Value {
        let first = &self.program.aggregations[aggs[0]];
        let data: Vec<serde_json::Value> = rows
            .iter()
            .map(|(key, datas)| {
                let keys = first
                    .keys
                    .iter()
                    .zip(key_values(first, key))
                    .map(|(column, value)| match (&column.ty, value) {
                        (Type::Stack, Value::Int { bits, .. }) => {
                            let user = crate::sema::ir::ustack_value::decode(bits).is_some();
                            json::stack(user, &self.symbols.stack_frames(bits))
                        }
                        (Type::Symbol(kind), Value::Str(record)) => {
                            serde_json::json!({ "value": self.symbols.symbol_text(*kind, record) })
                        }
                        (_, v) => serde_json::json!({ "value": json::value(&v) }),
                    })
                    .collect();
                let values = aggs
                    .iter()
                    .zip(datas)
                    .map(|(&a, data)| {
                        let agg = &self.program.aggregations[a];
                        let (func, value) = json::aggregation_value(&agg.func, data, self.normal[a]);
                        (agg.name.as_str(), func, value)
                    })
                    .collect();
                json::aggregation_row(keys, values)
            })
            .collect();
        // FreeBSD's name for the anonymous aggregation `@` is `_`.
        let name = if first.name.is_empty() { "_" } else { first.name.as_str() };
        serde_json::json!({ "aggregation-data": data, "aggregation-name": name })
    }

    /// Every aggregation as it is in the kernel now, each key as the
    /// metrics file labels it (sorted by those labels), for `metrics`.
    pub(crate) fn metrics_rows(&self) -> Vec<(&'a Aggregation, Vec<metrics::Row>)> {
        (0..self.program.aggregations.len())
            .map(|index| {
                let agg = &self.program.aggregations[index];
                let mut rows: Vec<metrics::Row> = self
                    .read(index)
                    .into_iter()
                    .map(|e| {
                        let labels = agg
                            .keys
                            .iter()
                            .zip(key_values(agg, &e.key))
                            .map(|(c, v)| self.label_text(&c.ty, &v))
                            .collect();
                        (labels, e.data)
                    })
                    .collect();
                rows.sort_by(|a, b| a.0.cmp(&b.0));
                (agg, rows)
            })
            .collect()
    }

    /// A key as a label value: an integer in decimal (as its type reads), a
    /// pointer in hex, a string as its text (hex if it is not text), a stack
    /// as its frames from the outermost in, `;` between them (the folded
    /// form flame graphs read).
    fn label_text(&self, ty: &Type, value: &Value<'_>) -> String {
        match (ty, value) {
            (Type::Stack, Value::Int { bits, .. }) => {
                let mut frames = self.symbols.stack_frames(*bits);
                frames.reverse();
                frames.join(";")
            }
            (Type::Pointer(_), Value::Int { bits, .. }) => format!("0x{bits:x}"),
            (Type::Symbol(kind), Value::Str(record)) => self.symbols.symbol_text(*kind, record),
            (_, v) => match json::value(v) {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            },
        }
    }

    /// trunc(@, n): keeps the n entries with the highest values (n < 0: the
    /// lowest); trunc(@) removes every entry.
    pub(crate) fn trunc(&mut self, index: usize, keep: Option<i64>) {
        let agg = &self.program.aggregations[index];
        let mut entries = self.snapshot(index);
        entries.sort_by(|a, b| {
            aggfmt::compare_values(&agg.func, &a.data, &b.data)
                .then_with(|| aggfmt::compare_keys(&key_values(agg, &a.key), &key_values(agg, &b.key)))
        });
        let n = entries.len();
        let doomed: Vec<&Entry> = match keep {
            None => entries.iter().collect(),
            Some(k) if k >= 0 => entries.iter().take(n.saturating_sub(k as usize)).collect(),
            Some(k) => entries.iter().skip(k.unsigned_abs().min(n as u64) as usize).collect(),
        };
        let map = self.session.aggregation_map(index);
        for e in &doomed {
            for key in e.kernel_keys() {
                if agg.is_array() {
                    // Array entries cannot be deleted: zeroed and unmarked, they print as absent.
                    self.write_all_cpus(index, key, false);
                } else {
                    let _ = map.delete(key);
                }
            }
        }
        let doomed: std::collections::HashSet<Vec<u8>> = doomed.into_iter().map(|e| e.key.clone()).collect();
        entries.retain(|e| !doomed.contains(&e.key));
        self.cache.get_mut()[index] = Some(entries);
    }

    /// clear(@): zeroes every value; the keys stay, as in DTrace.
    pub(crate) fn clear(&mut self, index: usize) {
        let agg = &self.program.aggregations[index];
        let mut entries = self.snapshot(index);
        for key in entries.iter().flat_map(Entry::kernel_keys) {
            self.write_all_cpus(index, key, true);
        }
        // What reading the zeroed map back would give (min() shows INT64_MAX...).
        let cleared = merge(&agg.func, &[vec![0u8; agg.map_value_words() * 8]]);
        for e in &mut entries {
            e.data = cleared.clone();
        }
        self.cache.get_mut()[index] = Some(entries);
    }

    pub(crate) fn normalize(&mut self, index: usize, factor: u64) {
        // DTrace refuses a zero factor at run time; treat it as no normalization.
        self.normal[index] = factor.max(1);
    }

    pub(crate) fn denormalize(&mut self, index: usize) {
        self.normal[index] = 1;
    }
}

/// The key columns of a raw map key, as printf values (strings as their
/// whole NUL-padded column, which DTrace's key printing looks at).
/// How one printing of an aggregation lays out its rows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RowStyle {
    Plain,
    /// agghist: each count() or sum() a bar, of this total, with these
    /// signs (positives, negatives) over all the rows.
    Hist(aggfmt::BarTotal, (bool, bool)),
    /// aggpack: each distribution one line over these buckets.
    Pack(aggfmt::PackedRange),
}

fn key_values<'k>(agg: &Aggregation, key: &'k [u8]) -> Vec<Value<'k>> {
    let mut values = Vec::new();
    for (column, off) in agg.keys.iter().zip(agg.key_offsets()) {
        let bytes = key.get(off..off + column.bytes).unwrap_or(&[]);
        values.push(match column.ty {
            Type::Int { size, signed, .. } => {
                let bits = bytes.get(..8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])));
                Value::Int { bits, size, signed }
            }
            Type::Pointer(_) | Type::Stack => {
                let bits = bytes.get(..8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])));
                Value::Int { bits, size: 8, signed: false }
            }
            _ => Value::Str(bytes),
        });
    }
    values
}

fn word(cpu: &[u8], i: usize) -> u64 {
    cpu.get(i * 8..i * 8 + 8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
}

/// Combines the CPUs' partial results (see `Aggregation::value_words` for the layout).
fn merge<C: AsRef<[u8]>>(func: &AggFunc, per_cpu: &[C]) -> AggData {
    let sum_word = |i: usize| per_cpu.iter().fold(0u64, |acc, c| acc.wrapping_add(word(c.as_ref(), i)));
    match func {
        AggFunc::Count | AggFunc::Sum => AggData::Scalar(sum_word(0) as i64),
        AggFunc::Min | AggFunc::Max => {
            let set = per_cpu.iter().map(AsRef::as_ref).filter(|c| word(c, 0) != 0).map(|c| word(c, 1) as i64);
            let value = if *func == AggFunc::Min { set.min() } else { set.max() };
            AggData::Scalar(value.unwrap_or_else(|| empty_scalar(func)))
        }
        AggFunc::Avg => AggData::Avg { count: sum_word(0), sum: sum_word(1) as i64 },
        AggFunc::Stddev => {
            let squares = per_cpu
                .iter()
                .map(AsRef::as_ref)
                .fold(0u128, |acc, c| acc.wrapping_add((u128::from(word(c, 3)) << 64) | u128::from(word(c, 2))));
            AggData::Stddev { count: sum_word(0), sum: sum_word(1) as i64, sum_of_squares: squares }
        }
        AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => {
            let buckets = func.bucket_count().unwrap_or(0);
            AggData::Buckets { counts: (0..buckets).map(sum_word).collect(), sum: sum_word(buckets) as i64 }
        }
    }
}

/// min() and max() with no value yet print as DTrace's initial values.
fn empty_scalar(func: &AggFunc) -> i64 {
    match func {
        AggFunc::Min => i64::MAX,
        AggFunc::Max => i64::MIN,
        _ => 0,
    }
}

/// The data of a key an aggregation does not have (in a joined printa()).
fn empty_data(func: &AggFunc) -> AggData {
    match func {
        AggFunc::Avg => AggData::Avg { count: 0, sum: 0 },
        AggFunc::Stddev => AggData::Stddev { count: 0, sum: 0, sum_of_squares: 0 },
        AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => {
            AggData::Buckets { counts: vec![0; func.bucket_count().unwrap_or(0)], sum: 0 }
        }
        _ => AggData::Scalar(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    #[test]
    fn merging_combines_cpus_per_function() {
        let two = |a: &[u64], b: &[u64]| vec![cpu(a), cpu(b)];
        assert_eq!(merge(&AggFunc::Count, &two(&[3], &[4])), AggData::Scalar(7));
        assert_eq!(merge(&AggFunc::Sum, &two(&[(-5i64) as u64], &[2])), AggData::Scalar(-3));
        // A CPU that never saw the key (count 0) does not take part in min/max.
        assert_eq!(merge(&AggFunc::Max, &two(&[1, (-7i64) as u64], &[0, 0])), AggData::Scalar(-7));
        assert_eq!(merge(&AggFunc::Min, &two(&[2, 9], &[1, 4])), AggData::Scalar(4));
        assert_eq!(merge(&AggFunc::Min, &two(&[0, 0], &[0, 0])), AggData::Scalar(i64::MAX));
        assert_eq!(merge(&AggFunc::Avg, &two(&[2, 10], &[1, 5])), AggData::Avg { count: 3, sum: 15 });
        assert_eq!(
            merge(&AggFunc::Stddev, &two(&[1, 1, u64::MAX, 0], &[1, 1, 1, 0])),
            AggData::Stddev { count: 2, sum: 2, sum_of_squares: 1u128 << 64 }
        );
        // Buckets are the function's words but the last, the sum; an array's
        // "updated" word after them is neither.
        let mut a = vec![0u64; 129];
        let mut b = vec![0u64; 129];
        (a[0], a[63], a[127], a[128]) = (1, 2, 40, 1);
        (b[0], b[63], b[127], b[128]) = (1, 0, (-2i64) as u64, 1);
        let AggData::Buckets { counts, sum } = merge(&AggFunc::Quantize, &two(&a, &b)) else { panic!("not buckets") };
        assert_eq!(counts.len(), 127);
        assert_eq!((counts[0], counts[63], counts[126], sum), (2, 2, 0, 38));
    }
}
