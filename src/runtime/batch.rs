//! Reading a whole per-CPU hash map in batches (BPF_MAP_LOOKUP_BATCH,
//! Linux 5.6): a few system calls for the map instead of two per key (the
//! next key, then its values), which is what printing an aggregation of
//! 10^6 keys costs most.

use std::os::fd::{AsFd, AsRawFd};

use libbpf_rs::{MapCore, MapFlags, MapHandle};

/// Receives a key and its values, one slice per possible CPU.
pub(crate) type EntryVisitor<'a> = dyn FnMut(&[u8], &[&[u8]]) + 'a;

/// Keys asked for per call; the kernel returns fewer at the end.
const BATCH: u32 = 4096;

/// Calls `visit` with every key of `map` and its per-CPU values (one
/// `value_size` slice per possible CPU), in the map's order.
pub(crate) fn for_each_percpu(map: &MapHandle, visit: &mut EntryVisitor) {
    if !read_batched(map, visit) {
        read_one_by_one(map, visit);
    }
}

/// False when the kernel refuses batch lookups of this map (nothing was
/// visited then).
fn read_batched(map: &MapHandle, visit: &mut EntryVisitor) -> bool {
    let Ok(cpus) = libbpf_rs::num_possible_cpus() else { return false };
    let key_size = map.key_size() as usize;
    let value_size = map.value_size() as usize;
    // Each CPU's value is 8-byte aligned in what the kernel copies out.
    let stride = value_size.div_ceil(8) * 8;
    let mut batch = BATCH;
    let mut keys = vec![0u8; key_size * batch as usize];
    let mut values = vec![0u8; stride * cpus * batch as usize];
    // The position tokens: a bucket index for hash maps, at most a key's size.
    let token_size = key_size.max(8);
    let (mut position, mut next) = (vec![0u8; token_size], vec![0u8; token_size]);
    let mut first = true;
    loop {
        let mut count = batch;
        let opts = libbpf_sys::bpf_map_batch_opts {
            sz: std::mem::size_of::<libbpf_sys::bpf_map_batch_opts>() as _,
            elem_flags: 0,
            flags: 0,
        };
        // SAFETY: the buffers hold `count` keys and values and a token each;
        // the kernel writes at most that much.
        let ret = unsafe {
            libbpf_sys::bpf_map_lookup_batch(
                map.as_fd().as_raw_fd(),
                if first { std::ptr::null_mut() } else { position.as_mut_ptr().cast() },
                next.as_mut_ptr().cast(),
                keys.as_mut_ptr().cast(),
                values.as_mut_ptr().cast(),
                &mut count,
                &opts,
            )
        };
        let errno = if ret < 0 { std::io::Error::last_os_error().raw_os_error().unwrap_or(0) } else { 0 };
        if ret < 0 && errno == libc::ENOSPC {
            // One bucket holds more keys than a batch: ask for more at once.
            batch *= 2;
            keys.resize(key_size * batch as usize, 0);
            values.resize(stride * cpus * batch as usize, 0);
            continue;
        }
        if ret < 0 && errno != libc::ENOENT {
            // The first call tells whether batches work here at all; a later
            // failure (the map changing under us) ends with what was read.
            return !first;
        }
        let mut per_cpu: Vec<&[u8]> = Vec::with_capacity(cpus);
        for i in 0..count as usize {
            per_cpu.clear();
            per_cpu.extend((0..cpus).map(|cpu| {
                let at = (i * cpus + cpu) * stride;
                &values[at..at + value_size]
            }));
            visit(&keys[i * key_size..(i + 1) * key_size], &per_cpu);
        }
        // ENOENT: that was the last of them.
        if ret < 0 {
            return true;
        }
        std::mem::swap(&mut position, &mut next);
        first = false;
    }
}

fn read_one_by_one(map: &MapHandle, visit: &mut EntryVisitor) {
    for key in map.keys() {
        // A key deleted since the walk saw it is simply gone.
        if let Ok(Some(per_cpu)) = map.lookup_percpu(&key, MapFlags::ANY) {
            let per_cpu: Vec<&[u8]> = per_cpu.iter().map(Vec::as_slice).collect();
            visit(&key, &per_cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs as root only (it creates a map): skipped otherwise.
    #[test]
    fn a_batched_read_gives_every_key_with_every_cpus_value() {
        let opts = libbpf_sys::bpf_map_create_opts {
            sz: std::mem::size_of::<libbpf_sys::bpf_map_create_opts>() as _,
            ..Default::default()
        };
        let Ok(map) = MapHandle::create(libbpf_rs::MapType::PercpuHash, Some("t"), 8, 12, 20000, &opts) else {
            return;
        };
        let cpus = libbpf_rs::num_possible_cpus().unwrap();
        for k in 0..10_000u64 {
            let values: Vec<Vec<u8>> =
                (0..cpus).map(|cpu| [k.to_ne_bytes().as_slice(), &(cpu as u32).to_ne_bytes()].concat()).collect();
            map.update_percpu(&k.to_ne_bytes(), &values, MapFlags::ANY).unwrap();
        }
        let read = |batched: bool| {
            let mut entries: Vec<(Vec<u8>, Vec<Vec<u8>>)> = Vec::new();
            let mut visit = |key: &[u8], per_cpu: &[&[u8]]| {
                entries.push((key.to_vec(), per_cpu.iter().map(|v| v.to_vec()).collect()))
            };
            if batched {
                assert!(read_batched(&map, &mut visit), "batch lookups");
            } else {
                read_one_by_one(&map, &mut visit);
            }
            entries
        };
        let mut entries = read(true);
        assert_eq!(entries.len(), 10_000);
        entries.sort_by_key(|(key, _)| u64::from_ne_bytes(key[..8].try_into().unwrap()));
        for (k, (key, per_cpu)) in entries.iter().enumerate() {
            assert_eq!(key, &(k as u64).to_ne_bytes());
            for (cpu, value) in per_cpu.iter().enumerate() {
                assert_eq!(value, &[(k as u64).to_ne_bytes().as_slice(), &(cpu as u32).to_ne_bytes()].concat());
            }
        }
        assert_eq!(read(false).len(), 10_000);
    }
}
