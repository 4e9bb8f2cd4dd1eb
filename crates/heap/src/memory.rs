//! How the index of a dump will be held, decided before it is built: in memory, or out of
//! core (its arrays in temporary files) when the estimate exceeds the memory allowed.
//!
//! The estimate counts the objects from the heap records' total size and the mean record size
//! of a sample (the first 8 MiB of heap records), at [`BYTES_PER_OBJECT`] each, plus a fixed
//! part. Without a limit, the memory allowed is what the system says is available, or the
//! process's memory cgroup limit when lower.

use std::path::PathBuf;

use graph::Placement;
use hprof::{Header, Records, SubRecord, SubRecords};

/// Peak bytes per object of the full retention index in memory, as measured on real dumps
/// (17.7 on a 46 M-object H2 dump, 18.0 on a 24 M-object one; see docs/decisions/0014).
pub const BYTES_PER_OBJECT: u64 = 19;

/// What the process holds besides the per-object arrays (code, class table, names).
const FIXED_BYTES: u64 = 64 << 20;

/// The decision and what it rests on.
#[derive(Debug, Clone)]
pub struct MemoryPlan {
    /// Objects the dump holds, estimated.
    pub objects: u64,
    /// Peak memory of the index in memory, estimated.
    pub estimate: u64,
    /// The memory allowed.
    pub limit: u64,
    /// Where `limit` comes from: `--memory-limit`, the cgroup, or the available memory.
    pub limit_source: &'static str,
    /// Where the big arrays go.
    pub placement: Placement,
}

impl MemoryPlan {
    /// Plans for `dump` under `limit` bytes (the available memory when `None`), with
    /// temporary files in `tmp_dir`.
    pub fn new(dump: &crate::Dump, limit: Option<u64>, tmp_dir: Option<PathBuf>) -> MemoryPlan {
        let objects = estimate_objects(dump);
        let estimate = objects * BYTES_PER_OBJECT + FIXED_BYTES;
        let (limit, limit_source) = match limit {
            Some(l) => (l, "--memory-limit"),
            None => available_memory(),
        };
        MemoryPlan {
            objects,
            estimate,
            limit,
            limit_source,
            placement: Placement { files: estimate > limit, dir: tmp_dir, limit },
        }
    }

    /// Whether the arrays go to temporary files.
    pub fn out_of_core(&self) -> bool {
        self.placement.files
    }

    /// One line for stderr: the mode and why.
    pub fn describe(&self) -> String {
        let mib = |b: u64| format!("{:.0} MiB", b as f64 / f64::from(1 << 20));
        let head = format!(
            "the index of about {:.1} M objects needs about {}; {} {}",
            self.objects as f64 / 1e6,
            mib(self.estimate),
            self.limit_source,
            mib(self.limit)
        );
        if self.out_of_core() {
            let dir = self.placement.dir.clone().unwrap_or_else(std::env::temp_dir);
            format!("{head}: out of core, its arrays in temporary files in {} (slower)", dir.display())
        } else {
            format!("{head}: in memory")
        }
    }
}

/// Objects in the heap records of `data`: their total size over the mean record size of a
/// sample, 8 MiB taken from up to 64 heap records spread over the file (the first record of a
/// dump is often its small objects, its arrays later). Reads only record heads elsewhere.
fn estimate_objects(dump: &crate::Dump) -> u64 {
    let data = dump.data();
    let Ok(header) = Header::parse(data) else { return 0 };
    // The walk maps the pages around every record head: they are given back as it goes,
    // or a file of many segments is resident whole before any work starts.
    let give_back = |from: u64, to: u64| dump.release(from, (to - from) as usize);
    let mut passing = crate::source::Passing::new(0, 64 << 20, &give_back);
    let mut ahead = crate::source::Ahead::new(dump);
    let heap: Vec<hprof::RawRecord<'_>> = dump.walking_heads(|| {
        Records::new(data, header.len)
            .map_while(Result::ok)
            .inspect(|r| {
                passing.at(r.offset);
                ahead.at(r.offset, r.body.len());
            })
            .filter(|r| r.tag == hprof::tag::HEAP_DUMP || r.tag == hprof::tag::HEAP_DUMP_SEGMENT)
            .collect()
    });
    let heap_bytes: u64 = heap.iter().map(|r| r.body.len() as u64).sum();
    let count = heap.len().min(64);
    let picks: Vec<&hprof::RawRecord<'_>> = (0..count).map(|k| &heap[k * heap.len() / count]).collect();
    let per_pick = (8u64 << 20) / count.max(1) as u64;
    let (mut sampled_bytes, mut sampled) = (0u64, 0u64);
    // Asked for at once: each is read at a place of its own.
    for raw in &picks {
        dump.prefetch(raw.body_offset(), per_pick as usize + (64 << 10));
    }
    for raw in picks {
        let mut last = raw.body_offset();
        let mut taken = 0;
        for (off, rec) in SubRecords::new(raw.body, raw.body_offset(), header.id_size).map_while(Result::ok) {
            let object = matches!(
                rec,
                SubRecord::Instance { .. }
                    | SubRecord::ObjArray { .. }
                    | SubRecord::PrimArray { .. }
                    | SubRecord::Class(_)
            );
            sampled += u64::from(object);
            taken += off - last;
            last = off;
            if taken >= per_pick {
                break;
            }
        }
        sampled_bytes += taken;
        dump.release(raw.offset, taken as usize + 64);
    }
    dump.release(0, data.len());
    if sampled == 0 || sampled_bytes == 0 {
        return heap_bytes / 32;
    }
    heap_bytes * sampled / sampled_bytes
}

/// The memory this process may use: the system's available memory, or its memory cgroup's
/// limit when that is lower (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`).
fn available_memory() -> (u64, &'static str) {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(u64::MAX, |kib| kib * 1024);
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let limit = cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let file = if controllers.is_empty() {
            format!("/sys/fs/cgroup{path}/memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
        } else {
            return None;
        };
        std::fs::read_to_string(file).ok()?.trim().parse::<u64>().ok()
    });
    match limit {
        Some(l) if l < available => (l, "the memory cgroup's limit"),
        _ => (available, "available memory"),
    }
}
