//! The consumer's side of the `dt_events` BPF ring buffer, read in DTrace's
//! way: one snapshot per pass. A pass takes the records committed before it
//! began and hands back their space once per `RELEASE_EVERY` bytes, where
//! libbpf's reader follows the producer record by record and stores its
//! position after each one. Following the producer closely makes the
//! probe's CPU and ours trade the same cache lines (the record being
//! written, the consumer position every reservation reads): with a
//! consumer as slow per record as formatting makes it, that doubled the
//! in-kernel cost of `printf()` of every event (bench (d)).

use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use libbpf_rs::MapCore;

/// The kernel's ring buffer record header (include/uapi/linux/bpf.h):
/// the length with these flag bits, then the page offset.
const BUSY_BIT: u32 = 1 << 31;
const DISCARD_BIT: u32 = 1 << 30;
const HEADER_BYTES: u64 = 8;

/// Bytes consumed between stores of the consumer position: the producer
/// gets space back this often within a pass.
pub(crate) const RELEASE_EVERY: u64 = 64 << 10;

pub(crate) struct EventRing {
    /// The consumer position's page, the only one user space may write.
    consumer: memmap2::MmapMut,
    /// The producer position's page, then the data pages. The kernel maps
    /// them twice in a row if asked, so that a record wrapping around the
    /// end reads as one slice, but every page mapped counts in dtrace's
    /// resident memory: mapped once, the few records that wrap are copied.
    producer_and_data: memmap2::Mmap,
    data_offset: usize,
    mask: u64,
}

/// How a pass ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Every record committed when the pass began was read: this many bytes.
    Drained(u64),
    /// The callback asked to stop (time is up, or an interrupt came).
    Stopped,
}

impl EventRing {
    pub(crate) fn new(map: &libbpf_rs::MapMut<'_>) -> Result<EventRing> {
        let size = u64::from(map.max_entries());
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let fd = map.as_fd().as_raw_fd();
        // SAFETY: a BPF ring buffer map's fd maps as the kernel documents
        // (kernel/bpf/ringbuf.c): the consumer page writable at offset 0,
        // the producer page and the data, read-only, after it. The kernel
        // changes their contents, read only through atomics below.
        let consumer = unsafe { memmap2::MmapOptions::new().len(page).map_mut(fd) }
            .context("cannot map the ring buffer's consumer page")?;
        let producer_and_data =
            unsafe { memmap2::MmapOptions::new().offset(page as u64).len(page + size as usize).map(fd) }
                .context("cannot map the ring buffer's data")?;
        Ok(EventRing { consumer, producer_and_data, data_offset: page, mask: size - 1 })
    }

    /// The data's bytes.
    pub(crate) fn size(&self) -> u64 {
        self.mask + 1
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the page is 8-byte aligned and lives as long as self.
        unsafe { &*(self.consumer.as_ptr() as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: as consumer_pos.
        unsafe { &*(self.producer_and_data.as_ptr() as *const AtomicU64) }
    }

    /// Reads the records committed before the call, oldest first, giving
    /// each one's data to `each`, which returns false to stop the pass.
    pub(crate) fn pass(&self, mut each: impl FnMut(&[u8]) -> bool) -> Pass {
        let data = &self.producer_and_data[self.data_offset..];
        let end = self.producer_pos().load(Ordering::Acquire);
        let mut pos = self.consumer_pos().load(Ordering::Relaxed);
        let start = pos;
        let mut released = pos;
        let mut stopped = false;
        while pos < end {
            let at = (pos & self.mask) as usize;
            // SAFETY: at is within the data pages and 8-byte aligned
            // (records are rounded up to 8 bytes, the size is pages).
            let header = unsafe { &*(data.as_ptr().add(at) as *const AtomicU32) }.load(Ordering::Acquire);
            if header & BUSY_BIT != 0 {
                // Reserved before the pass began, not yet committed: the
                // records after it wait for it, as the kernel orders them.
                break;
            }
            let len = header & !(BUSY_BIT | DISCARD_BIT);
            if len as usize > data.len() {
                // The kernel never writes one: stop rather than read past the ring.
                break;
            }
            let from = at + HEADER_BYTES as usize;
            pos += (u64::from(len) + HEADER_BYTES + 7) & !7;
            let to = from + len as usize;
            let keep_going = header & DISCARD_BIT != 0
                || if to <= data.len() {
                    each(&data[from..to])
                } else {
                    let mut whole = data[from.min(data.len())..].to_vec();
                    whole.extend_from_slice(&data[..to - data.len()]);
                    each(&whole)
                };
            if pos - released >= RELEASE_EVERY {
                self.consumer_pos().store(pos, Ordering::Release);
                released = pos;
            }
            if !keep_going {
                stopped = true;
                break;
            }
        }
        if pos != released {
            self.consumer_pos().store(pos, Ordering::Release);
        }
        if stopped {
            Pass::Stopped
        } else {
            Pass::Drained(pos - start)
        }
    }

    /// Reads until no committed record is left.
    pub(crate) fn drain(&self, mut each: impl FnMut(&[u8])) {
        while self.pass(|record| {
            each(record);
            true
        }) != Pass::Drained(0)
        {}
    }
}

/// How long the consumer sleeps between drains: switchrate, unless the
/// records arriving would fill half the ring sooner. A ring that fills
/// while the consumer sleeps drops records, and a faster reader is
/// invisible in the output.
pub(crate) struct Pace {
    half_ring: f64,
    last_drain: std::time::Instant,
}

impl Pace {
    pub(crate) fn new(ring_size: u64) -> Pace {
        Pace { half_ring: ring_size as f64 / 2.0, last_drain: std::time::Instant::now() }
    }

    /// After a drain that read `bytes` since the previous one.
    pub(crate) fn next_sleep(&mut self, bytes: u64, switchrate: Duration) -> Duration {
        let now = std::time::Instant::now();
        let since = now.duration_since(self.last_drain);
        self.last_drain = now;
        sleep_between_drains(self.half_ring, bytes, since, switchrate)
    }
}

/// Switchrate, or less when `bytes` arriving per `since` fill `half_ring`
/// bytes sooner, but not below MIN_SLEEP for that.
fn sleep_between_drains(half_ring: f64, bytes: u64, since: Duration, switchrate: Duration) -> Duration {
    if bytes == 0 || since.is_zero() {
        return switchrate;
    }
    let half_full_in = Duration::from_secs_f64(half_ring * since.as_secs_f64() / bytes as f64);
    switchrate.min(half_full_in.max(MIN_SLEEP))
}

/// The shortest sleep between drains: a storm of records is read in long
/// drains, not in a busy loop of short ones.
const MIN_SLEEP: Duration = Duration::from_millis(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_consumer_sleeps_less_than_switchrate_only_when_records_would_fill_half_the_ring_sooner() {
        let ms = Duration::from_millis;
        let half = (2 << 20) as f64;
        // Nothing arrived, or little: switchrate.
        assert_eq!(sleep_between_drains(half, 0, ms(20), ms(20)), ms(20));
        assert_eq!(sleep_between_drains(half, 64 << 10, ms(20), ms(20)), ms(20));
        // 4 MB in 20 ms: half the ring fills in 10 ms.
        assert_eq!(sleep_between_drains(half, 4 << 20, ms(20), ms(20)), ms(10));
        // A storm: the floor, not a busy loop.
        assert_eq!(sleep_between_drains(half, 1 << 40, ms(20), ms(20)), MIN_SLEEP);
        // A switchrate under the floor is kept.
        let fast = Duration::from_micros(100);
        assert_eq!(sleep_between_drains(half, 1 << 40, ms(20), fast), fast);
    }
}
