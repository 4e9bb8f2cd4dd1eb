//! How the index of a dump will be held, decided before it is built: in memory, out of core
//! (its arrays in temporary files) when the estimate exceeds the memory allowed, or not at all
//! when even out of core it would need more than that.
//!
//! Both figures count the objects and their references, from the heap records' total size and
//! a sample of them (8 MiB spread over the file), each at a measured cost, plus a fixed part.
//! Without a limit, the memory allowed is what the system says is available, or the process's
//! memory cgroup limit when lower.

use std::path::PathBuf;

use graph::Placement;
use hprof::{Header, Records, SubRecord, SubRecords};
use rustc_hash::FxHashMap;

/// Peak bytes per object and per reference of the full retention index in memory, and its
/// fixed part: fitted to stay 8% above the peaks measured on four dumps of real programs (H2
/// 35.7 M objects and 47.7 M references, 409 MB; Tomcat 30.0 M and 45.1 M, 359 MB; javac 6.3 M
/// and 23.5 M, 203 MB; a small Tomcat 2.8 M and 4.2 M, 88 MB). Counting objects alone put
/// javac's index, 3.7 references an object, in memory under a limit it needed 30% more than:
/// it thrashed for minutes. Refitted when the index got leaner (it was 6.0 and 6.5 bytes):
/// a limit between the two would have gone out of core, at twice the time, for nothing.
const IN_MEMORY: Cost = Cost { fixed: 64 << 20, per_object: 3.0, per_reference: 5.7 };

/// The least the index needs out of core: the program, and what its phases read at random
/// (the packed references, the address lookup, the search's bits), set from the limits under
/// which the same four dumps still completed in a few times their in-memory time. The small
/// Tomcat took 56 times as long under 57 MiB (its minimum here is 60) and did not finish in
/// minutes under 39 MiB, where the least should have been said at once.
const OUT_OF_CORE: Cost = Cost { fixed: 48 << 20, per_object: 1.5, per_reference: 1.5 };

/// The least the depth-first search needs out of core: the program, and the successor lists
/// it reads at random (`graph::packed`, about 2 bytes a reference and a byte a node), which
/// must stay in the page cache. Heaps of many references an object need more than
/// [`OUT_OF_CORE`] says: javac's (6.3 M objects, 23.1 M references) was let in at 91 MiB,
/// and at 94 MiB its search faulted 2,400–4,400 pages and the run took 12–54 s; at 99 MiB
/// and more it takes 12–14 s, run after run.
const SEARCH: Cost = Cost { fixed: 48 << 20, per_object: 0.5, per_reference: 2.2 };

/// Bytes as a fixed part plus so much per object and per reference.
#[derive(Debug, Clone, Copy)]
struct Cost {
    fixed: u64,
    per_object: f64,
    per_reference: f64,
}

impl Cost {
    fn of(self, objects: u64, references: u64) -> u64 {
        self.fixed + (self.per_object * objects as f64 + self.per_reference * references as f64) as u64
    }
}

/// The decision and what it rests on.
#[derive(Debug, Clone)]
pub struct MemoryPlan {
    /// Objects the dump holds, estimated.
    pub objects: u64,
    /// Non-null references between them, estimated.
    pub references: u64,
    /// Peak memory of the index in memory, estimated.
    pub estimate: u64,
    /// The least memory the index can be built in, out of core.
    pub minimum: u64,
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
        let (objects, references) = estimate_counts(dump);
        let (limit, limit_source) = match limit {
            Some(l) => (l, "--memory-limit"),
            None => available_memory(),
        };
        Self::for_counts(objects, references, limit, limit_source, tmp_dir)
    }

    fn for_counts(
        objects: u64,
        references: u64,
        limit: u64,
        limit_source: &'static str,
        tmp_dir: Option<PathBuf>,
    ) -> MemoryPlan {
        let estimate = IN_MEMORY.of(objects, references);
        // Never more than in memory: a tiny dump's index fits in what the program needs.
        let minimum = OUT_OF_CORE.of(objects, references).max(SEARCH.of(objects, references)).min(estimate);
        MemoryPlan {
            objects,
            references,
            estimate,
            minimum,
            limit,
            limit_source,
            placement: Placement { files: estimate > limit, dir: tmp_dir, limit },
        }
    }

    /// Whether the arrays go to temporary files.
    pub fn out_of_core(&self) -> bool {
        self.placement.files
    }

    /// Whether the memory allowed is below the least the index can be built in.
    pub fn too_little(&self) -> bool {
        self.limit < self.minimum
    }

    /// One line for stderr: the mode and why.
    pub fn describe(&self) -> String {
        let head = format!(
            "the index of about {:.1} M objects and {:.1} M references needs about {}; {} {}",
            self.objects as f64 / 1e6,
            self.references as f64 / 1e6,
            mib(self.estimate),
            self.limit_source,
            mib(self.limit)
        );
        if self.too_little() {
            format!("{head}: too little, even out of core it needs at least {}", mib(self.minimum))
        } else if self.out_of_core() {
            let dir = self.placement.dir.clone().unwrap_or_else(std::env::temp_dir);
            format!("{head}: out of core, its arrays in temporary files in {} (slower)", dir.display())
        } else {
            format!("{head}: in memory")
        }
    }
}

/// Bytes as MiB, rounded up (a minimum must not read lower than it is).
pub fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

/// Objects and references in the heap records of `dump`: their total size times the counts
/// in a sample over its size, the sample 8 MiB taken from up to 64 heap records spread over
/// the file (the first record of a dump is often its small objects, its arrays later); only
/// record heads are read elsewhere. References are counted as an instance's non-null
/// reference fields (or, for a class without a dump before the objects, every
/// identifier-sized word of its field bytes) and an object array's non-null elements.
fn estimate_counts(dump: &crate::Dump) -> (u64, u64) {
    let data = dump.data();
    let Ok(header) = Header::parse(data) else { return (0, 0) };
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
    let (mut sampled_bytes, mut sampled, mut refs) = (0u64, 0u64, 0u64);
    let id = header.id_size.bytes() as u64;
    let fields = reference_fields(&heap, header.id_size);
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
            refs += match rec {
                SubRecord::Instance { head, values } => match fields.get(&head.class_id) {
                    Some(offsets) => non_null(values, offsets.iter().map(|&o| o as usize), header.id_size),
                    None => values.len() as u64 / id,
                },
                SubRecord::ObjArray { elements, .. } => elements.iter().filter(|&e| e != 0).count() as u64,
                _ => 0,
            };
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
        return (heap_bytes / 32, heap_bytes / 16);
    }
    (heap_bytes * sampled / sampled_bytes, heap_bytes * refs / sampled_bytes)
}

/// The byte offsets of the reference fields within each class's instance field values (its
/// own, then its superclasses', as HPROF lays them out), from the class dumps before the first
/// object of `heap`'s records, where HotSpot writes all of them; classes not met there are
/// counted another way.
fn reference_fields(heap: &[hprof::RawRecord<'_>], id_size: hprof::IdSize) -> FxHashMap<u64, Vec<u32>> {
    let id = id_size.bytes() as u32;
    let mut own: FxHashMap<u64, (u64, Vec<hprof::BasicType>)> = FxHashMap::default();
    'records: for raw in heap {
        for (_, rec) in SubRecords::new(raw.body, raw.body_offset(), id_size).map_while(Result::ok) {
            match rec {
                SubRecord::Class(c) => {
                    own.insert(c.head.class_id, (c.head.super_id, c.fields.iter().map(|f| f.ty).collect()));
                }
                SubRecord::Root(_) | SubRecord::HeapDumpInfo(_) => {}
                _ => break 'records,
            }
        }
    }
    own.keys()
        .map(|&class| {
            // Up the chain of superclasses; a cycle (a corrupt dump) ends where it repeats.
            let (mut at, mut offset, mut refs, mut steps) = (class, 0u32, Vec::new(), 0);
            while let Some((up, types)) = own.get(&at) {
                for &ty in types {
                    if ty == hprof::BasicType::Object {
                        refs.push(offset);
                        offset += id;
                    } else {
                        offset += ty.primitive_bytes();
                    }
                }
                steps += 1;
                if *up == 0 || steps > own.len() {
                    break;
                }
                at = *up;
            }
            (class, refs)
        })
        .collect()
}

/// The non-null identifiers at `offsets` of `values`.
fn non_null(values: &[u8], offsets: impl Iterator<Item = usize>, id_size: hprof::IdSize) -> u64 {
    offsets.filter(|&o| hprof::id_in(values, o, id_size) != 0).count() as u64
}

/// The memory this process may use, in bytes (see [`available_memory`]).
pub fn memory_available() -> u64 {
    available_memory().0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_between_the_least_and_the_estimate_goes_out_of_core_and_below_it_is_refused() {
        let mib = 1u64 << 20;
        // javac's counts: 6.3 M objects, 23.1 M references.
        let plan = |limit| MemoryPlan::for_counts(6_300_000, 23_100_000, limit * mib, "--memory-limit", None);
        let roomy = plan(400);
        assert!(!roomy.out_of_core() && !roomy.too_little(), "{}", roomy.describe());
        let tight = plan(150);
        assert!(tight.out_of_core() && !tight.too_little(), "{}", tight.describe());
        let short = plan(60);
        assert!(short.too_little(), "{}", short.describe());
        // Its search reads 2 bytes a reference at random: 94 MiB thrashed, 99 did not.
        assert!(plan(94).too_little() && !plan(100).too_little(), "{}", plan(94).describe());
        assert!(short.describe().ends_with(&format!("at least {}", super::mib(short.minimum))), "{}", short.describe());
        // A tiny dump never needs more out of core than in memory.
        let tiny = MemoryPlan::for_counts(1_000, 2_000, 40 * mib, "--memory-limit", None);
        assert!(tiny.minimum <= tiny.estimate);
    }
}
