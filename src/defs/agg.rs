//! The aggregating functions (count(), quantize(), ...) with their
//! compile-time parameters, and the bucket geometry of quantize(),
//! lquantize() and llquantize(): the type checker sizes an aggregation's
//! state from it, the code generator puts each value in the bucket DTrace
//! would, and the consumer labels and weighs the buckets with it
//! (`consume::aggfmt`).
//!
//! The reference is Oracle's DTrace for Linux (dtrace-utils): the BPF bucket
//! code (bpf/agg_qbin.c, bpf/agg_lqbin.c, dt_cg.c's
//! dt_cg_agg_llquantize_bin). Where illumos differs (its llquantize() has
//! no negative buckets) we follow dtrace-utils.
//!
//! Everything here is pure: no I/O, no kernel, no panics on any input.

use std::cmp::Ordering;

/// quantize(): buckets for negative powers of two, zero, positive powers of two.
pub(crate) const QUANTIZE_BUCKETS: usize = 127;
/// quantize(): the bucket that counts zero.
pub(crate) const QUANTIZE_ZERO_BUCKET: usize = 63;

/// Which aggregating function, with its compile-time parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    Stddev,
    Quantize,
    Lquantize { base: i64, limit: i64, step: i64 },
    Llquantize { factor: u64, low: u64, high: u64, nsteps: u64 },
}

// ---------------------------------------------------------------------------
// Bucket geometry
// ---------------------------------------------------------------------------

impl AggFunc {
    /// Buckets of quantize(), lquantize() and llquantize(); None for the
    /// other functions.
    pub(crate) fn bucket_count(&self) -> Option<usize> {
        match *self {
            AggFunc::Quantize => Some(QUANTIZE_BUCKETS),
            AggFunc::Lquantize { base, limit, step } => Some(lquantize_bucket_count(base, limit, step)),
            AggFunc::Llquantize { factor, low, high, nsteps } => {
                Some(llquantize_bucket_count(factor, low, high, nsteps))
            }
            _ => None,
        }
    }

    /// The bucket `value` goes to, for quantize(), lquantize() and
    /// llquantize(); None for the other functions.
    pub(crate) fn bucket_of(&self, value: i64) -> Option<usize> {
        match *self {
            AggFunc::Quantize => Some(quantize_bucket_of(value)),
            AggFunc::Lquantize { base, limit, step } => Some(lquantize_bucket_of(base, limit, step, value)),
            AggFunc::Llquantize { factor, low, high, nsteps } => {
                Some(llquantize_bucket_of(factor, low, high, nsteps, value))
            }
            _ => None,
        }
    }
}

/// The value a quantize() bucket is labelled with (DTRACE_QUANTIZE_BUCKETVAL):
/// -2^62 .. -1, 0, 1 .. 2^62. A bucket below zero holds the values from its
/// label down to (not including) the next label below it; a bucket above
/// zero holds its label up to the next label.
pub(crate) fn quantize_bucket_value(bucket: usize) -> i64 {
    let zero = QUANTIZE_ZERO_BUCKET;
    match bucket.cmp(&zero) {
        Ordering::Less => -(1i64 << (zero - 1 - bucket).min(62)),
        Ordering::Equal => 0,
        Ordering::Greater => 1i64 << (bucket - zero - 1).min(62),
    }
}

/// The quantize() bucket of `value`, as dtrace-utils' BPF code (agg_qbin.c)
/// and illumos' kernel assign it: 63 for 0, 63 + 1 + floor(log2(v)) above
/// zero, 63 - 1 - floor(log2(-v)) below; i64::MIN joins bucket 0.
/// Also the reference the generated code is tested against; the metrics
/// file derives each bucket's bounds from it.
pub(crate) fn quantize_bucket_of(value: i64) -> usize {
    if value == 0 {
        return QUANTIZE_ZERO_BUCKET;
    }
    if value == i64::MIN {
        return 0;
    }
    let log2 = 63 - value.unsigned_abs().leading_zeros() as usize;
    if value > 0 {
        QUANTIZE_ZERO_BUCKET + 1 + log2
    } else {
        QUANTIZE_ZERO_BUCKET - 1 - log2
    }
}

/// lquantize()'s number of levels: (limit - base) / step, as the compiler
/// computes it (0 for parameters the compiler rejects).
pub(crate) fn lquantize_levels(base: i64, limit: i64, step: i64) -> u64 {
    if step <= 0 || limit <= base {
        return 0;
    }
    (limit.wrapping_sub(base) as u64) / step as u64
}

/// Levels plus the underflow and overflow buckets.
pub(crate) fn lquantize_bucket_count(base: i64, limit: i64, step: i64) -> usize {
    usize::try_from(lquantize_levels(base, limit, step)).unwrap_or(usize::MAX - 2).saturating_add(2)
}

/// The value an lquantize() bucket stands for: base + (i - 1) * step for a
/// level, and -- as DTrace's sort (dt_aggregate_lquantizedsum) weighs them --
/// base - 1 for the underflow bucket and base + levels * step + 1 for the
/// overflow bucket. The printed labels are "< base" and ">= base + levels * step".
pub(crate) fn lquantize_bucket_value(base: i64, limit: i64, step: i64, bucket: usize) -> i64 {
    let levels = lquantize_levels(base, limit, step) as i64;
    if bucket == 0 {
        base.wrapping_sub(1)
    } else if bucket as u64 > levels as u64 {
        base.wrapping_add(levels.wrapping_mul(step)).wrapping_add(1)
    } else {
        base.wrapping_add((bucket as i64 - 1).wrapping_mul(step))
    }
}

/// The lquantize() bucket of `value` (dtrace-utils' agg_lqbin.c, same as
/// illumos' kernel): 0 below base, 1 + (value - base) / step, at most
/// levels + 1 (the overflow bucket).
/// Also the reference the generated code is tested against; the metrics
/// file derives each bucket's bounds from it.
pub(crate) fn lquantize_bucket_of(base: i64, limit: i64, step: i64, value: i64) -> usize {
    let levels = lquantize_levels(base, limit, step);
    if step <= 0 || value < base {
        return 0;
    }
    let level = (value.wrapping_sub(base) as u64) / step as u64;
    usize::try_from(level.min(levels) + 1).unwrap_or(usize::MAX)
}

/// llquantize()'s geometry (dt_cg_agg_llquantize_bin). The buckets run in
/// numerical order: negative overflow, the negative log-linear buckets
/// (largest magnitude first), the underflow bucket in the middle (values
/// with |v| < factor^low, negative or not), the positive buckets, positive
/// overflow. Each order of magnitude has nsteps - nsteps/factor buckets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Llq {
    pub(crate) factor: u64,
    pub(crate) low: u64,
    pub(crate) high: u64,
    pub(crate) steps: u64,
    /// nsteps / factor: buckets of a magnitude that lie below it.
    pub(crate) steps_factor: u64,
    /// Buckets per order of magnitude.
    pub(crate) per_mag: u64,
    /// The underflow bucket.
    pub(crate) bin0: u64,
    pub(crate) nbins: u64,
}

impl Llq {
    pub(crate) fn new(factor: u64, low: u64, high: u64, nsteps: u64) -> Llq {
        let steps_factor = nsteps.checked_div(factor).unwrap_or(0);
        let per_mag = nsteps.saturating_sub(steps_factor);
        let half = high.saturating_sub(low).saturating_add(1).saturating_mul(per_mag);
        Llq {
            factor,
            low,
            high,
            steps: nsteps,
            steps_factor,
            per_mag,
            bin0: half.saturating_add(1),
            nbins: half.saturating_mul(2).saturating_add(3),
        }
    }
}

/// factor^exp as the C code's `(uint64_t)powl(factor, exp)` (saturating
/// where the compiler would have rejected the parameters).
pub(crate) fn pow_u64(factor: u64, exp: u64) -> u64 {
    match factor {
        0 => u64::from(exp == 0),
        1 => 1,
        _ => u32::try_from(exp).ok().and_then(|e| factor.checked_pow(e)).unwrap_or(u64::MAX),
    }
}

pub(crate) fn llquantize_bucket_count(factor: u64, low: u64, high: u64, nsteps: u64) -> usize {
    usize::try_from(Llq::new(factor, low, high, nsteps).nbins).unwrap_or(usize::MAX)
}

/// The llquantize() bucket of `value`, step for step as dtrace-utils' code
/// generator computes it (unsigned 64-bit arithmetic on |value|, division by
/// zero giving zero as in BPF). For parameters the compiler accepts the
/// result is always below [`llquantize_bucket_count`].
/// Also the reference the generated code is tested against; the metrics
/// file derives each bucket's bounds from it.
pub(crate) fn llquantize_bucket_of(factor: u64, low: u64, high: u64, nsteps: u64, value: i64) -> usize {
    let g = Llq::new(factor, low, high, nsteps);
    let tmp = value.unsigned_abs();
    let mut max = pow_u64(factor, low);
    if tmp < max {
        return g.bin0 as usize;
    }
    // Magnitudes as u128 so high + 1 cannot overflow.
    let (low, high) = (u128::from(low), u128::from(high));
    let mut mag = low;
    let mut ind: u64 = 0;
    loop {
        // The compiler keeps factor^(high + 1) within 2^64: max only wraps
        // (to 0 in BPF) on the last multiplication, and then no magnitude
        // matches and the value overflows. Stopping there also bounds the loop.
        max = match max.checked_mul(factor) {
            Some(m) if factor >= 2 => m,
            _ => {
                mag = high + 1;
                break;
            }
        };
        if tmp < max {
            ind = if mag != 0 {
                tmp.checked_div(max.checked_div(nsteps).unwrap_or(0)).unwrap_or(0)
            } else {
                tmp.wrapping_mul(nsteps).checked_div(max).unwrap_or(0)
            };
            ind = ind.wrapping_sub(g.steps_factor);
            break;
        }
        mag = mag.saturating_add(1);
        if mag > high {
            break;
        }
    }
    let mut bin = ((mag - low) as u64).wrapping_mul(g.per_mag).wrapping_add(ind).wrapping_add(1);
    if value < 0 {
        bin = bin.wrapping_neg();
    }
    bin.wrapping_add(g.bin0) as usize
}

/// llquantize()'s bucket walk for constant parameters, in the form the
/// code generator emits it: with t = |v|, t < `first` is the underflow
/// bucket; else the first magnitude with t < `upper` gives
/// `offset + (t / divisor)` (or `t * nsteps / upper` for magnitude 0); past
/// them all, `overflow`. Negative values negate that; `bin0` is added last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LlquantizePlan {
    pub first: u64,
    pub bin0: u64,
    pub nsteps: u64,
    pub magnitudes: Vec<LlquantizeMagnitude>,
    pub overflow: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LlquantizeMagnitude {
    pub upper: u64,
    /// None for magnitude 0, which scales by nsteps / upper instead.
    pub divisor: Option<u64>,
    pub offset: u64,
}

pub(crate) fn llquantize_plan(factor: u64, low: u64, high: u64, nsteps: u64) -> LlquantizePlan {
    let g = Llq::new(factor, low, high, nsteps);
    let mut magnitudes = Vec::new();
    let mut max = pow_u64(factor, low);
    let mut mag = low;
    while mag <= high {
        max = match max.checked_mul(factor) {
            Some(m) if factor >= 2 => m,
            _ => break,
        };
        let offset = (mag - low).wrapping_mul(g.per_mag).wrapping_add(1).wrapping_sub(g.steps_factor);
        let divisor = if mag != 0 { Some(max.checked_div(nsteps).unwrap_or(0)) } else { None };
        magnitudes.push(LlquantizeMagnitude { upper: max, divisor, offset });
        mag += 1;
    }
    let overflow = (high + 1 - low).wrapping_mul(g.per_mag).wrapping_add(1);
    LlquantizePlan { first: pow_u64(factor, low), bin0: g.bin0, nsteps, magnitudes, overflow }
}

impl LlquantizePlan {
    /// The bucket of `value` by the plan (what the generated code computes).
    #[cfg(test)] // the reference the generated code is tested against
    pub(crate) fn bucket_of(&self, value: i64) -> usize {
        let t = value.unsigned_abs();
        if t < self.first {
            return self.bin0 as usize;
        }
        let mut bin = self.overflow;
        for m in &self.magnitudes {
            if t < m.upper {
                let ind = match m.divisor {
                    Some(d) => t.checked_div(d).unwrap_or(0),
                    None => t.wrapping_mul(self.nsteps).checked_div(m.upper).unwrap_or(0),
                };
                bin = ind.wrapping_add(m.offset);
                break;
            }
        }
        if value < 0 {
            bin = bin.wrapping_neg();
        }
        bin.wrapping_add(self.bin0) as usize
    }
}
