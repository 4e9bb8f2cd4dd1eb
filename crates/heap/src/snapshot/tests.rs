use super::order::{sorted_columns, Kept};
use super::*;
use crate::census::ReadOptions;
use graph::Progress;
use proptest::prelude::*;
use testkit::{HeapBuilder, ObjRef, Ty};

/// The phases a build goes through.
#[derive(Default)]
struct Phases(std::sync::Mutex<Vec<String>>);

impl Progress for Phases {
    fn start(&self, phase: &str, _: u64) {
        self.0.lock().unwrap().push(phase.to_owned());
    }
    fn advance(&self, _: u64) {}
}

/// Builds `dump` reading its records twice (in memory) and, out of core, reading it once
/// where the heap pass's stream serves; asserts that the snapshots are the same, and
/// returns whether the second read the dump once.
fn both_ways(dump: Dump) -> bool {
    let opts = ReadOptions::default();
    let twice = Snapshot::build(dump.clone(), &opts, &graph::NoProgress);
    let phases = Phases::default();
    let files = graph::Placement { files: true, ..graph::Placement::default() };
    let once = Snapshot::build_placed(dump, &opts, &files, &phases);
    let (a, b) = match (twice, once) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            return false;
        }
        (a, b) => panic!("one build failed: {:?} / {:?}", a.err(), b.err()),
    };
    let n = a.object_count() as usize;
    assert_eq!(n, b.object_count() as usize);
    assert_eq!(a.class.iter().collect::<Vec<_>>(), b.class.iter().collect::<Vec<_>>(), "classes");
    assert_eq!(a.size8.iter().collect::<Vec<_>>(), b.size8.iter().collect::<Vec<_>>(), "sizes");
    assert_eq!(a.big_sizes, b.big_sizes);
    assert_eq!(a.offsets.iter().collect::<Vec<_>>(), b.offsets.iter().collect::<Vec<_>>(), "offsets");
    for v in 0..n {
        let (x, y) = (a.edges.successors(v).collect::<Vec<_>>(), b.edges.successors(v).collect::<Vec<_>>());
        assert_eq!(x, y, "references of object {v}");
    }
    assert_eq!(a.referent_first.iter().collect::<Vec<_>>(), b.referent_first.iter().collect::<Vec<_>>());
    assert_eq!(a.mirrors, b.mirrors);
    assert_eq!(a.roots, b.roots);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.census.warnings, b.census.warnings);
    let read_once = phases.0.lock().unwrap().iter().any(|p| p == READ_ONCE);
    read_once
}

fn fixture(name: &str) -> Dump {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    Dump::open(&dir.join(name)).unwrap()
}

#[test]
fn real_dumps_read_once_out_of_core_give_the_snapshot_read_twice() {
    // HotSpot's dumps have their classes first and objects in address order: read once.
    assert!(both_ways(fixture("demo-jdk17.hprof")));
    assert!(both_ways(fixture("corpus/openjdk_jdk11_04_x64.hprof.gz")));
    // The old hprof agent's (several dumps, classes among the objects) and Android's
    // (class records that claim the array before them) are read twice, and the same.
    both_ways(fixture("corpus/oracle_jdk7_21_hprofagent.hprof"));
    assert!(!both_ways(fixture("corpus/dialer.android-hprof")));
}

/// A heap of `shape`'s objects: nodes, weak references (a referent first in their
/// references), object arrays and primitive arrays, pointing at each other by index or at
/// ids that are not in the dump.
fn random_heap(shape: &[(u8, u16, u16)], threads: usize, region: usize, segment: usize) -> Vec<u8> {
    let mut h = HeapBuilder::new();
    let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("v", Ty::Int), ("other", Ty::Object)]);
    let reference = h.class("java.lang.ref.Reference", None, &[("referent", Ty::Object), ("queue", Ty::Object)]);
    let weak = h.class("java.lang.ref.WeakReference", Some(reference), &[("extra", Ty::Object)]);
    let target = |objs: &[ObjRef], k: u16| match k % 7 {
        0 => None,
        1 => Some(ObjRef(0x7777_0000 + u64::from(k))),
        _ => objs.get(usize::from(k) % objs.len().max(1)).copied(),
    };
    let mut objs = Vec::new();
    for &(kind, a, _) in shape {
        objs.push(match kind % 4 {
            0 => h.instance(node),
            1 => h.instance(weak),
            2 => {
                let elements: Vec<Option<ObjRef>> = (0..a % 6).map(|i| target(&objs, a.wrapping_mul(i + 3))).collect();
                h.object_array("[Ljava/lang/Object;", &elements)
            }
            _ => h.primitive_array(Ty::Byte, u32::from(a % 40)),
        });
    }
    for (i, &(kind, a, b)) in shape.iter().enumerate() {
        let fields: &[&str] = match kind % 4 {
            0 => &["next", "other"],
            1 => &["referent", "queue", "extra"],
            _ => &[],
        };
        for (f, field) in fields.iter().enumerate() {
            if let Some(t) = target(&objs, if f == 0 { a } else { b.wrapping_add(f as u16) }) {
                h.set(objs[i], field, t);
            }
        }
    }
    if let Some(&first) = objs.first() {
        h.root(hprof::RootKind::JniGlobal, first);
    }
    h.parallel(threads, region).segment_bytes(segment);
    h.build()
}

proptest! {
    #[test]
    fn random_heaps_read_once_give_the_snapshot_read_twice(
        shape in proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 0..300),
        threads in 1usize..5,
        region in 1usize..40,
        segment in 64usize..4096,
    ) {
        let bytes = random_heap(&shape, threads, region, segment);
        prop_assert!(both_ways(Dump::from_vec(bytes)) || shape.is_empty());
    }

    #[test]
    fn damaged_heaps_read_once_give_the_snapshot_read_twice(
        shape in proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..100),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let mut bytes = random_heap(&shape, 2, 7, 512);
        for (at, x) in flips {
            let at = at.index(bytes.len());
            bytes[at] ^= x;
        }
        both_ways(Dump::from_vec(bytes));
    }
}

#[test]
fn chunks_start_inside_pieces_and_runs() {
    // More objects than a chunk of the object pass, in pieces of small segments, written
    // by three threads of a parallel dump: every chunk starts inside a piece of each run.
    let shape: Vec<(u8, u16, u16)> =
        (0..(CHUNK as u32 * 5 / 2)).map(|i| ((i % 7) as u8, (i * 31 % 65_521) as u16, (i * 17) as u16)).collect();
    assert!(both_ways(Dump::from_vec(random_heap(&shape, 3, 5_000, 1 << 16))));
    assert!(both_ways(Dump::from_vec(random_heap(&shape, 1, 1, 1 << 16))));
}

proptest! {
    #[test]
    fn sorted_columns_merge_and_keep_the_first_of_each_address(
        mut a in proptest::collection::vec(proptest::array::uniform2(0u64..1000), 0..300),
        mut b in proptest::collection::vec(proptest::array::uniform2(0u64..1000), 0..50),
        sort in any::<bool>(),
        files in any::<bool>(),
        gap in 0usize..40,
    ) {
        if sort {
            a.sort_unstable();
        }
        b.sort_unstable();
        let mut expect = [a.clone(), b.clone()].concat();
        expect.sort_unstable();
        let before = expect.len();
        expect.dedup_by_key(|p| p[0]);
        let place = graph::Placement { files, ..graph::Placement::default() };
        // In pieces with gaps between them, as the scan leaves them.
        let mut pieces = Vec::new();
        let mut spaced = Vec::new();
        for (k, chunk) in a.chunks(gap.max(1)).enumerate() {
            spaced.extend(std::iter::repeat_n([u64::MAX - k as u64, 7], k % 3));
            pieces.push(spaced.len()..spaced.len() + chunk.len());
            spaced.extend_from_slice(chunk);
        }
        let objects = graph::Column::from_vec(spaced, &place);
        let (addrs, offsets, duplicates, order) =
            sorted_columns(Kept::Pairs(objects, &pieces), &b, 1000, &place);
        prop_assert_eq!(addrs.iter().collect::<Vec<_>>(), expect.iter().map(|p| p[0]).collect::<Vec<_>>());
        prop_assert_eq!(offsets.iter().collect::<Vec<_>>(), expect.iter().map(|p| p[1]).collect::<Vec<_>>());
        prop_assert_eq!(duplicates as usize, before - expect.len());
        // Where the pairs ascend, the class records' places in the result, one each.
        prop_assert_eq!(order.is_some(), a.is_sorted());
        if let (Some(order), 0) = (order, duplicates) {
            prop_assert_eq!(order.class_at.iter().map(|&i| expect[i as usize]).collect::<Vec<_>>(), b);
        }
    }
}
