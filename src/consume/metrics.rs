//! `-x metricsfile=PATH`: the script's aggregations as Prometheus text
//! exposition (format 0.0.4, what node_exporter's textfile collector and
//! Prometheus read), rewritten atomically at every printa(), every aggrate
//! interval and at exit, so a fleet's Prometheus merges what each host's
//! dtrace aggregates.
//!
//! `@name` becomes the family `dtrace_name` (`dtrace_anonymous` for `@`),
//! key columns become labels (`key0`, `key1`, ... or the names
//! `-x metricslabels=name:l0,l1` gives). count() is a counter
//! (`dtrace_name_total`); sum(), min(), max() and stddev() are gauges;
//! avg() is a summary without quantiles (`_sum`, `_count`); quantize(),
//! lquantize() and llquantize() are histograms whose `le` bounds are the
//! buckets' real, inclusive upper values (the values are integers), with
//! `_sum` (which the kernel keeps beside the buckets) and `_count`.
//! Values are the raw 64-bit integers, exact; normalize() only changes
//! what is printed.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use super::aggfmt::AggData;
use crate::defs::agg::AggFunc;
use crate::sema::ir::{Aggregation, Program};

/// One key of an aggregation: its label values, then its data.
pub(crate) type Row = (Vec<String>, AggData);

/// The metrics file and how its labels are named.
pub(crate) struct MetricsFile {
    path: PathBuf,
    /// Where the text is written before it is renamed over `path`.
    temporary: PathBuf,
    /// Label names by aggregation name.
    labels: HashMap<String, Vec<String>>,
    /// The last write failed (reported once, until a write succeeds).
    failing: bool,
}

impl MetricsFile {
    /// Checks the labels against the program's aggregations and that the
    /// file's directory takes files, before anything is traced.
    pub(crate) fn open(path: &str, labels: &[(String, Vec<String>)], program: &Program) -> Result<MetricsFile, String> {
        let mut by_name = HashMap::new();
        for (name, names) in labels {
            let shown = if name.is_empty() { "@".to_string() } else { format!("@{name}") };
            let agg = program
                .aggregations
                .iter()
                .find(|a| &a.name == name)
                .ok_or_else(|| format!("metricslabels names {shown}, which the program does not use"))?;
            if agg.keys.len() != names.len() {
                return Err(format!(
                    "metricslabels gives {} label{} for {shown}, which has {} key{}",
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                    agg.keys.len(),
                    if agg.keys.len() == 1 { "" } else { "s" }
                ));
            }
            by_name.insert(name.clone(), names.clone());
        }
        let path = PathBuf::from(path);
        let file_name =
            path.file_name().ok_or_else(|| format!("metrics file '{}' is not a file name", path.display()))?;
        // A name node_exporter's textfile collector skips (it reads *.prom).
        let temporary = path.with_file_name(format!(".{}.{}.tmp", file_name.to_string_lossy(), std::process::id()));
        std::fs::File::create(&temporary).map_err(|e| {
            format!("failed to open metrics file '{}': {}", path.display(), crate::compile::io_reason(&e))
        })?;
        let _ = std::fs::remove_file(&temporary);
        Ok(MetricsFile { path, temporary, labels: by_name, failing: false })
    }

    /// Replaces the file with `aggregations`' exposition text: written
    /// beside it, then renamed, so a reader sees the old or the new file.
    pub(crate) fn write(&mut self, aggregations: &[(&Aggregation, Vec<Row>)]) {
        let text = render(aggregations, &self.labels);
        let written = std::fs::File::create(&self.temporary)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .and_then(|()| std::fs::rename(&self.temporary, &self.path));
        match written {
            Ok(()) => self.failing = false,
            Err(e) => {
                let _ = std::fs::remove_file(&self.temporary);
                if !self.failing {
                    stderr_line!(
                        "dtrace: failed to write metrics file '{}': {}",
                        self.path.display(),
                        crate::compile::io_reason(&e)
                    );
                }
                self.failing = true;
            }
        }
    }
}

/// The exposition text of `aggregations` (each with its rows).
pub(crate) fn render(aggregations: &[(&Aggregation, Vec<Row>)], labels: &HashMap<String, Vec<String>>) -> String {
    let mut out = String::new();
    for (agg, rows) in aggregations {
        let names: Vec<String> = match labels.get(&agg.name) {
            Some(names) => names.clone(),
            None => (0..agg.keys.len()).map(|i| format!("key{i}")).collect(),
        };
        family(&mut out, agg, &names, rows);
    }
    out
}

fn family(out: &mut String, agg: &Aggregation, label_names: &[String], rows: &[Row]) {
    let base = if agg.name.is_empty() { "dtrace_anonymous".to_string() } else { format!("dtrace_{}", agg.name) };
    let shown = if agg.name.is_empty() { "@".to_string() } else { format!("@{}", agg.name) };
    let (name, kind) = match agg.func {
        AggFunc::Count => (format!("{base}_total"), "counter"),
        AggFunc::Sum | AggFunc::Min | AggFunc::Max | AggFunc::Stddev => (base.clone(), "gauge"),
        AggFunc::Avg => (base.clone(), "summary"),
        AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => (base.clone(), "histogram"),
    };
    let _ = writeln!(out, "# HELP {name} DTrace aggregation {shown} = {}", function_text(&agg.func));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let bounds = upper_bounds(&agg.func);
    let shown_buckets = histogram_span(&bounds, rows);
    for (keys, data) in rows {
        let labels: Vec<(&str, String)> = label_names.iter().map(String::as_str).zip(keys.iter().cloned()).collect();
        match data {
            AggData::Scalar(v) if agg.func == AggFunc::Count => sample(out, &name, &labels, &(*v as u64).to_string()),
            AggData::Scalar(v) => sample(out, &name, &labels, &v.to_string()),
            AggData::Avg { count, sum } => {
                sample(out, &format!("{base}_sum"), &labels, &sum.to_string());
                sample(out, &format!("{base}_count"), &labels, &count.to_string());
            }
            AggData::Stddev { count, sum, sum_of_squares } => {
                sample(out, &name, &labels, &super::aggfmt::stddev(*count, *sum, *sum_of_squares, 1).to_string())
            }
            AggData::Buckets { counts, sum } => {
                let mut cumulative: i64 = 0;
                for (i, bound) in bounds.iter().enumerate() {
                    cumulative = cumulative.wrapping_add(counts.get(i).map_or(0, |&c| c as i64));
                    let last = i + 1 == bounds.len();
                    let shown = shown_buckets.as_ref().is_some_and(|span| span.contains(&i));
                    if !last && (!shown || bound.is_none()) {
                        continue;
                    }
                    let le = match bound {
                        Some(b) if !last => b.to_string(),
                        _ => "+Inf".to_string(),
                    };
                    let mut with_le = labels.clone();
                    with_le.push(("le", le));
                    sample(out, &format!("{base}_bucket"), &with_le, &cumulative.to_string());
                }
                sample(out, &format!("{base}_sum"), &labels, &sum.to_string());
                sample(out, &format!("{base}_count"), &labels, &cumulative.to_string());
            }
        }
    }
}

/// `count()`, `quantize()`, `lquantize(v, 0, 100, 10)` for HELP.
fn function_text(func: &AggFunc) -> String {
    match func {
        AggFunc::Count => "count()".into(),
        AggFunc::Sum => "sum()".into(),
        AggFunc::Min => "min()".into(),
        AggFunc::Max => "max()".into(),
        AggFunc::Avg => "avg()".into(),
        AggFunc::Stddev => "stddev()".into(),
        AggFunc::Quantize => "quantize()".into(),
        AggFunc::Lquantize { base, limit, step } => format!("lquantize(, {base}, {limit}, {step})"),
        AggFunc::Llquantize { factor, low, high, nsteps } => format!("llquantize(, {factor}, {low}, {high}, {nsteps})"),
    }
}

fn sample(out: &mut String, name: &str, labels: &[(&str, String)], value: &str) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (label, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{label}=\"{}\"", escape(v));
        }
        out.push('}');
    }
    out.push(' ');
    out.push_str(value);
    out.push('\n');
}

/// A label value in the text format: backslash, quote and newline escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// For each bucket of a quantizing function, the largest value it holds
/// (None when no value lands in it: llquantize()'s ghost buckets), found by
/// bisecting the bucket function the kernel's code is tested against; the
/// last bucket holds everything above and is `+Inf`.
pub(crate) fn upper_bounds(func: &AggFunc) -> Vec<Option<i64>> {
    let Some(n) = func.bucket_count() else { return Vec::new() };
    let bucket = |v: i64| func.bucket_of(v).unwrap_or(0);
    // The smallest value whose bucket is above b (None: no value is).
    let first_above = |b: usize| -> Option<i64> {
        if bucket(i64::MAX) <= b {
            return None;
        }
        if bucket(i64::MIN) > b {
            return Some(i64::MIN);
        }
        // bucket(lo) <= b < bucket(hi); i128 so that hi - lo cannot overflow.
        let (mut lo, mut hi) = (i128::from(i64::MIN), i128::from(i64::MAX));
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if bucket(mid as i64) > b {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi as i64)
    };
    let mut bounds = Vec::with_capacity(n);
    let mut previous: Option<i64> = None;
    for b in 0..n {
        let upper = first_above(b).map(|v| v - 1);
        // A bucket whose upper bound is the previous one's holds nothing.
        let bound = match (upper, previous) {
            (Some(u), Some(p)) if u <= p => None,
            (Some(u), _) => Some(u),
            (None, _) => None,
        };
        if bound.is_some() {
            previous = bound;
        }
        bounds.push(bound);
    }
    bounds
}

/// The buckets worth a series: from the lowest to the highest bucket any
/// key of the aggregation counts in. Below, every cumulative count is 0;
/// above, every one equals `+Inf`'s; leaving them out loses nothing.
fn histogram_span(bounds: &[Option<i64>], rows: &[Row]) -> Option<std::ops::RangeInclusive<usize>> {
    let counted = rows.iter().flat_map(|(_, data)| match data {
        AggData::Buckets { counts, .. } => {
            counts.iter().enumerate().take(bounds.len()).filter(|(_, &c)| c != 0).map(|(i, _)| i).collect()
        }
        _ => Vec::new(),
    });
    let (low, high) = counted.fold(None, |span: Option<(usize, usize)>, i| match span {
        Some((low, high)) => Some((low.min(i), high.max(i))),
        None => Some((i, i)),
    })?;
    Some(low..=high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::ir::{KeyColumn, Type};

    fn agg(name: &str, func: AggFunc, keys: usize) -> Aggregation {
        let column = KeyColumn { ty: Type::String, bytes: 8 };
        Aggregation { name: name.into(), func, keys: vec![column; keys] }
    }

    #[test]
    fn bucket_bounds_are_the_largest_value_each_bucket_holds() {
        let q = upper_bounds(&AggFunc::Quantize);
        assert_eq!(q.len(), 127);
        // 0 holds 0; 1 holds 1; 2 holds 2..3; 4 holds 4..7.
        assert_eq!((q[63], q[64], q[65], q[66]), (Some(0), Some(1), Some(3), Some(7)));
        // -1 holds -1; -2 holds -3..-2.
        assert_eq!((q[62], q[61]), (Some(-1), Some(-2)));
        let lq = upper_bounds(&AggFunc::Lquantize { base: 0, limit: 100, step: 10 });
        assert_eq!(lq[..3], [Some(-1), Some(9), Some(19)]);
        assert_eq!(lq[10], Some(99));
        let llq = AggFunc::Llquantize { factor: 10, low: 0, high: 2, nsteps: 10 };
        let bounds = upper_bounds(&llq);
        // Every value's bucket has a bound at least the value, and the bucket
        // below it a bound below the value.
        for v in [-1000i64, -55, -1, 0, 1, 9, 10, 11, 99, 100, 999, 1000, 5000] {
            let b = llq.bucket_of(v).unwrap();
            assert!(b + 1 == bounds.len() || bounds[b].is_some_and(|u| u >= v), "{v} in {b}");
            assert!(bounds[..b].iter().flatten().all(|&u| u < v), "{v}");
        }
    }

    #[test]
    fn renders_each_function_as_its_metric_type() {
        let count = agg("calls", AggFunc::Count, 1);
        let avg = agg("", AggFunc::Avg, 0);
        let mut buckets = vec![0u64; 127];
        buckets[63 + 1] = 2; // 1
        buckets[63 + 1 + 3] = 5; // 8..15
        let q = agg("lat", AggFunc::Quantize, 2);
        let text = render(
            &[
                (&count, vec![(vec!["a\"b".into()], AggData::Scalar(u64::MAX as i64))]),
                (&avg, vec![(vec![], AggData::Avg { count: 4, sum: -10 })]),
                (&q, vec![(vec!["read".into(), "1".into()], AggData::Buckets { counts: buckets, sum: 93 })]),
            ],
            &HashMap::from([("lat".to_string(), vec!["func".to_string(), "fd".to_string()])]),
        );
        let want = r#"# HELP dtrace_calls_total DTrace aggregation @calls = count()
# TYPE dtrace_calls_total counter
dtrace_calls_total{key0="a\"b"} 18446744073709551615
# HELP dtrace_anonymous DTrace aggregation @ = avg()
# TYPE dtrace_anonymous summary
dtrace_anonymous_sum -10
dtrace_anonymous_count 4
# HELP dtrace_lat DTrace aggregation @lat = quantize()
# TYPE dtrace_lat histogram
dtrace_lat_bucket{func="read",fd="1",le="1"} 2
dtrace_lat_bucket{func="read",fd="1",le="3"} 2
dtrace_lat_bucket{func="read",fd="1",le="7"} 2
dtrace_lat_bucket{func="read",fd="1",le="15"} 7
dtrace_lat_bucket{func="read",fd="1",le="+Inf"} 7
dtrace_lat_sum{func="read",fd="1"} 93
dtrace_lat_count{func="read",fd="1"} 7
"#;
        assert_eq!(text, want);
    }
}
