//! `-x oformat=json`: records as data, structured as FreeBSD's dtrace
//! (libdtrace's dt_oformat code, dtrace(1)'s STRUCTURED OUTPUT) structures
//! them, one JSON object per line so that `jq` can follow a running trace:
//!
//! - a clause's record: `{"timestamp", "cpu", "id", "provider", "module",
//!   "function", "name", "output": [...]}`, one element of `output` per
//!   action: `{"value": v}` for trace(), `{"message": text}` then one
//!   `{"value": v}` per argument for printf(), `{"stack-frames": [...]}` /
//!   `{"ustack-frames": [...]}`, `{"tracemem": ...}`, and for printa()
//!   `{"aggregation-data": [{"keys": [{"value": k}, ...], "count": n}, ...],
//!   "aggregation-name": "x"}` (value named `count`, `sum`, `min`, `max`,
//!   `average`, `stddev` or `buckets`);
//! - drops: the pseudo-probe `dtrace:INTERNAL:INTERNAL:DROP` with `count`,
//!   `total`, `kind` (DTRACEDROP_*) and `msg`; runtime errors the same way
//!   as `...:ERROR` with the fault (FreeBSD prints those on stderr only).
//!
//! FreeBSD writes one document, `{"dtrace": {"probes": [...]}}`, valid
//! once dtrace exits; each line here is one element of its `probes`
//! (`jq -s '{dtrace: {probes: .}}'` gives FreeBSD's document).
//!
//! Everything here is pure: values in, JSON out.

use serde_json::{json, Map, Value as Json};

use super::aggfmt::{self, AggData};
use super::printf::Value;
use crate::defs::agg::AggFunc;

/// The object of one clause's record.
pub(super) fn probe_record(
    timestamp: u64,
    cpu: u32,
    id: u32,
    probe: Option<&crate::provider::Probe>,
    output: Vec<Json>,
) -> Json {
    let (provider, module, function, name) =
        probe.map_or(("", "", "", ""), |p| (p.provider, p.module.as_str(), p.function.as_str(), p.name.as_str()));
    json!({
        "timestamp": timestamp,
        "cpu": cpu,
        "id": id,
        "provider": provider,
        "module": module,
        "function": function,
        "name": name,
        "output": output,
    })
}

/// A traced value as FreeBSD shows it (`{"value": ...}` holds this):
/// integers as numbers (by the value's type, so none is rounded or
/// wrapped), strings and memory as text when DTrace would print them as a
/// string, else as `0x` and the bytes in hex.
pub(super) fn value(v: &Value<'_>) -> Json {
    match *v {
        Value::Int { bits, size, signed } => integer(bits, size, signed),
        Value::Float { bits, size: 4 } => serde_json::json!(f32::from_bits(bits as u32)),
        Value::Float { bits, .. } => serde_json::json!(f64::from_bits(bits)),
        Value::Str(bytes) | Value::Text(bytes) => bytes_value(bytes),
    }
}

fn integer(bits: u64, size: u8, signed: bool) -> Json {
    match (size, signed) {
        (8, true) => json!(bits as i64),
        (4, true) => json!(bits as i32),
        (2, true) => json!(bits as i16),
        (1, true) => json!(bits as i8),
        (8, false) => json!(bits),
        (4, false) => json!(bits as u32),
        (2, false) => json!(bits as u16),
        _ => json!(bits as u8),
    }
}

/// Bytes as dt_format_bytes_get formats them: the string they hold, or hex.
/// (An empty string is "", where FreeBSD's shows its NULs in hex.)
pub(super) fn bytes_value(bytes: &[u8]) -> Json {
    if bytes.iter().all(|&b| b == 0) {
        return json!("");
    }
    match aggfmt::as_string(bytes) {
        Some(s) => Json::String(String::from_utf8_lossy(s).into_owned()),
        None => {
            Json::String(std::iter::once("0x".to_string()).chain(bytes.iter().map(|b| format!("{b:02x}"))).collect())
        }
    }
}

/// printf(): the formatted message, then each argument's raw value; a
/// printf without arguments is followed by one value, 0 (as FreeBSD's).
pub(super) fn printf(message: &[u8], args: &[Value<'_>]) -> Vec<Json> {
    let mut items = vec![json!({ "message": String::from_utf8_lossy(message) })];
    if args.is_empty() {
        items.push(json!({ "value": 0 }));
    }
    items.extend(args.iter().map(|a| json!({ "value": value(a) })));
    items
}

/// stack() and ustack(): each frame's `symbol` (as DTrace prints it), and
/// its `module`, `name` and `offset` where the frame has them.
pub(super) fn stack(user: bool, frames: &[String]) -> Json {
    let frames: Vec<Json> = frames.iter().map(|f| frame(f)).collect();
    let list = if user { "ustack-frames" } else { "stack-frames" };
    json!({ list: frames })
}

/// `module`name+0xoff`, `module`name`, `module`0xaddr` or `0xaddr`.
fn frame(text: &str) -> Json {
    let mut object = Map::new();
    object.insert("symbol".into(), json!(text));
    let (module, rest) = match text.split_once('`') {
        Some((m, rest)) => (Some(m), rest),
        None => (None, text),
    };
    if let Some(m) = module {
        object.insert("module".into(), json!(m));
    }
    match rest.split_once("+0x") {
        Some((name, off)) => {
            object.insert("name".into(), json!(name));
            object.insert("offset".into(), json!(format!("0x{off}")));
        }
        None if rest.starts_with("0x") => {
            object.insert("offset".into(), json!(rest));
        }
        None => {
            object.insert("name".into(), json!(rest));
        }
    }
    Json::Object(object)
}

/// One aggregation's value, named by its function as FreeBSD names it,
/// normalized as printa() shows it; the quantize family as the rows of
/// DTrace's table: `{"value", "count"}`, the end buckets with their
/// `operator`.
pub(super) fn aggregation_value(func: &AggFunc, data: &AggData, normal: u64) -> (&'static str, Json) {
    let scaled = |v: i64| aggfmt::scaled(v, normal);
    match (func, data) {
        (AggFunc::Count, AggData::Scalar(v)) => ("count", json!((*v as u64) / normal.max(1))),
        (AggFunc::Sum, AggData::Scalar(v)) => ("sum", json!(scaled(*v))),
        (AggFunc::Min, AggData::Scalar(v)) => ("min", json!(scaled(*v))),
        (AggFunc::Max, AggData::Scalar(v)) => ("max", json!(scaled(*v))),
        (_, AggData::Avg { count, sum }) => ("average", json!(aggfmt::average(*count, *sum, normal))),
        (_, AggData::Stddev { count, sum, sum_of_squares }) => {
            ("stddev", json!(aggfmt::stddev(*count, *sum, *sum_of_squares, normal)))
        }
        (_, AggData::Buckets { .. }) => {
            let rows: Vec<Json> = aggfmt::distribution_rows(func, data)
                .into_iter()
                .map(|r| {
                    let mut bucket = Map::new();
                    bucket.insert("value".into(), json!(r.value));
                    if let Some(op) = r.operator {
                        bucket.insert("operator".into(), json!(op));
                    }
                    bucket.insert("count".into(), json!(scaled(r.count)));
                    Json::Object(bucket)
                })
                .collect();
            ("buckets", Json::Array(rows))
        }
        (_, AggData::Scalar(v)) => ("value", json!(v)),
    }
}

/// One row of printa(): its keys (`{"value": k}`, a stack as its frames)
/// and each aggregation's value. A function
/// that appears twice in one printa() (printa(@a, @b) of two counts) names
/// the later values `<function>@<aggregation>`, which FreeBSD would repeat.
pub(super) fn aggregation_row(keys: Vec<Json>, values: Vec<(&str, &'static str, Json)>) -> Json {
    let mut row = Map::new();
    row.insert("keys".into(), Json::Array(keys));
    for (agg_name, func_name, v) in values {
        let name = if row.contains_key(func_name) { format!("{func_name}@{agg_name}") } else { func_name.to_string() };
        row.insert(name, v);
    }
    Json::Object(row)
}

/// DTRACEDROP_* as FreeBSD numbers them in `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DropKind {
    Principal = 0,
    Aggregation = 1,
    Dynamic = 2,
    Speculation = 5,
    SpeculationBusy = 6,
    SpeculationUnavailable = 7,
    DoubleError = 9,
}

impl DropKind {
    /// The DTRACEDROP_* name of the kind (the droptags option).
    pub(crate) fn tag(self) -> &'static str {
        match self {
            DropKind::Principal => "DTRACEDROP_PRINCIPAL",
            DropKind::Aggregation => "DTRACEDROP_AGGREGATION",
            DropKind::Dynamic => "DTRACEDROP_DYNAMIC",
            DropKind::Speculation => "DTRACEDROP_SPEC",
            DropKind::SpeculationBusy => "DTRACEDROP_SPECBUSY",
            DropKind::SpeculationUnavailable => "DTRACEDROP_SPECUNAVAIL",
            DropKind::DoubleError => "DTRACEDROP_DBLERROR",
        }
    }
}

/// A pseudo-probe record of dtrace itself (`dtrace:INTERNAL:INTERNAL:NAME`),
/// stamped with the time of day as FreeBSD's drop records are.
fn internal(name: &str, cpu: Option<u32>) -> Map<String, Json> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let fields = [
        ("timestamp", json!(format!("{}.{:06}", now.as_secs(), now.subsec_micros()))),
        ("cpu", cpu.map_or(json!(-1), |c| json!(c))),
        ("id", json!(-1)),
        ("provider", json!("dtrace")),
        ("module", json!("INTERNAL")),
        ("function", json!("INTERNAL")),
        ("name", json!(name)),
    ];
    fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A drop report: `count` lost since the last report, `total` so far.
pub(super) fn drop(kind: DropKind, cpu: Option<u32>, count: u64, total: u64, message: &str) -> Json {
    let mut object = internal("DROP", cpu);
    object.insert("count".into(), json!(count));
    object.insert("total".into(), json!(total));
    object.insert("kind".into(), json!(kind as u32));
    object.insert("msg".into(), json!(format!("{message}\n")));
    Json::Object(object)
}

/// A runtime error: the enabled probe, the probe, the fault and where.
pub(super) struct Fault<'a> {
    pub epid: u32,
    pub probe_id: u32,
    pub probe: &'a str,
    /// DTrace's fault name: "invalid address", "divide-by-zero", ...
    pub fault: &'a str,
    pub address: Option<u64>,
    /// The faulting clause's statement ID (from 1), as dtrace-utils numbers it.
    pub action: u32,
    pub message: &'a str,
}

pub(super) fn error(f: &Fault<'_>) -> Json {
    let mut object = internal("ERROR", None);
    object.insert("epid".into(), json!(f.epid));
    object.insert("probe-id".into(), json!(f.probe_id));
    object.insert("probe".into(), json!(f.probe));
    object.insert("fault".into(), json!(f.fault));
    if let Some(a) = f.address {
        object.insert("address".into(), json!(format!("0x{a:x}")));
    }
    object.insert("action".into(), json!(f.action));
    object.insert("msg".into(), json!(format!("{}\n", f.message)));
    Json::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_type_and_bytes_their_form() {
        let int = |bits: u64, size: u8, signed: bool| value(&Value::Int { bits, size, signed });
        assert_eq!(int(u64::MAX, 8, false), json!(u64::MAX));
        assert_eq!(int(u64::MAX, 8, true), json!(-1));
        assert_eq!(int(0xff, 1, false), json!(255));
        assert_eq!(int(0xffff_fffe, 4, true), json!(-2));
        assert_eq!(value(&Value::Str(b"bash")), json!("bash"));
        assert_eq!(bytes_value(b"ab\0\0"), json!("ab"));
        assert_eq!(bytes_value(b"\x01\x02\0"), json!("0x010200"));
        assert_eq!(bytes_value(b"a\0b"), json!("0x610062"));
        assert_eq!(bytes_value(b"\0\0\0"), json!(""));
    }

    #[test]
    fn printf_is_the_message_then_each_argument() {
        let args = [Value::Int { bits: 7, size: 4, signed: true }, Value::Str(b"x")];
        assert_eq!(
            printf(b"x=7\n", &args),
            vec![json!({"message": "x=7\n"}), json!({"value": 7}), json!({"value": "x"})]
        );
        assert_eq!(printf(b"hi\n", &[]), vec![json!({"message": "hi\n"}), json!({"value": 0})]);
    }

    #[test]
    fn frames_are_split_into_module_name_and_offset() {
        let frames =
            ["vmlinux`do_syscall_64+0x5d", "libc.so.6`getppid", "vmlinux`0xffff1000", "0x7f00"].map(String::from);
        assert_eq!(
            stack(false, &frames),
            json!({"stack-frames": [
                {"symbol": "vmlinux`do_syscall_64+0x5d", "module": "vmlinux", "name": "do_syscall_64", "offset": "0x5d"},
                {"symbol": "libc.so.6`getppid", "module": "libc.so.6", "name": "getppid"},
                {"symbol": "vmlinux`0xffff1000", "module": "vmlinux", "offset": "0xffff1000"},
                {"symbol": "0x7f00", "offset": "0x7f00"},
            ]})
        );
        assert!(stack(true, &[]).get("ustack-frames").is_some());
    }

    #[test]
    fn aggregation_values_are_named_by_function() {
        assert_eq!(aggregation_value(&AggFunc::Count, &AggData::Scalar(9), 1), ("count", json!(9)));
        assert_eq!(aggregation_value(&AggFunc::Sum, &AggData::Scalar(-4), 1), ("sum", json!(-4)));
        assert_eq!(aggregation_value(&AggFunc::Sum, &AggData::Scalar(40), 10), ("sum", json!(4)));
        assert_eq!(aggregation_value(&AggFunc::Avg, &AggData::Avg { count: 4, sum: 10 }, 1), ("average", json!(2)));
        let mut buckets = vec![0u64; 127];
        buckets[63 + 1 + 2] = 3; // values 4..7
        let (name, rows) = aggregation_value(&AggFunc::Quantize, &AggData::Buckets { counts: buckets, sum: 23 }, 1);
        assert_eq!(name, "buckets");
        assert_eq!(rows, json!([{"value": 2, "count": 0}, {"value": 4, "count": 3}, {"value": 8, "count": 0}]));
        let lq = AggFunc::Lquantize { base: 0, limit: 10, step: 5 };
        let (_, rows) = aggregation_value(&lq, &AggData::Buckets { counts: vec![1, 0, 0, 2], sum: 53 }, 1);
        assert_eq!(
            rows,
            json!([
                {"value": 0, "operator": "<", "count": 1},
                {"value": 0, "count": 0},
                {"value": 5, "count": 0},
                {"value": 10, "operator": ">=", "count": 2},
            ])
        );
        let row = aggregation_row(
            vec![json!({"value": "a"})],
            vec![("a", "count", json!(1)), ("b", "count", json!(2)), ("c", "sum", json!(3))],
        );
        assert_eq!(row.to_string(), r#"{"keys":[{"value":"a"}],"count":1,"count@b":2,"sum":3}"#);
    }

    #[test]
    fn records_keep_freebsds_field_order() {
        let text = probe_record(5, 1, 2, None, vec![json!({"value": 1})]).to_string();
        assert_eq!(
            text,
            r#"{"timestamp":5,"cpu":1,"id":2,"provider":"","module":"","function":"","name":"","output":[{"value":1}]}"#
        );
        let d = drop(DropKind::Aggregation, Some(1), 3, 7, "3 aggregation drops on CPU 1");
        assert_eq!(
            (d["kind"].clone(), d["cpu"].clone(), d["msg"].clone()),
            (json!(1), json!(1), json!("3 aggregation drops on CPU 1\n"))
        );
        assert_eq!(d["name"], json!("DROP"));
    }
}
