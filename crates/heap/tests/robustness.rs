//! Hostile and broken input: never a panic, a hang, or an allocation sized by a corrupt field.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use graph::NoProgress;
use heap::{Census, Dump, Error, ReadOptions, Snapshot, WarningKind};
use hprof::RootKind;
use proptest::prelude::*;
use testkit::{HeapBuilder, Ty};

/// Records the largest single allocation, to prove none is sized by a corrupt length.
struct Tracking;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY (test-only allocator): forwards to the system allocator and only records sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

fn sample() -> Vec<u8> {
    let mut h = HeapBuilder::new();
    let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("v", Ty::Int)]);
    let holder = h.class("com.example.Holder", None, &[]);
    let mut prev = None;
    for i in 0..40 {
        let n = h.instance(node);
        if let Some(p) = prev {
            h.set(n, "next", p);
        }
        prev = Some(n);
        h.primitive_array(Ty::Char, i);
    }
    let arr = h.object_array("[Lcom/example/Node;", &[prev, None]);
    h.static_ref(holder, "all", Some(arr));
    h.sticky_class(holder);
    h.root(RootKind::JniGlobal, prev.unwrap());
    h.segment_bytes(512);
    h.build()
}

fn both(bytes: Vec<u8>) -> (Result<Census, Error>, Result<Snapshot, Error>) {
    let dump = Dump::from_vec(bytes);
    (
        Census::build(&dump, &ReadOptions::default(), &NoProgress),
        Snapshot::build(dump, &ReadOptions::default(), &NoProgress),
    )
}

#[test]
fn every_truncation_gives_an_error_or_a_warned_partial_result() {
    let full = sample();
    let (census, _) = both(full.clone());
    let whole = census.unwrap().total();
    for len in 0..full.len() {
        let (c, s) = both(full[..len].to_vec());
        match (c, s) {
            (Ok(c), Ok(_)) => {
                assert!(c.warnings.count(WarningKind::Truncated) > 0, "cut at {len} but no truncation warning");
                assert!(c.total().instances <= whole.instances);
            }
            (Err(e), Err(_)) => assert!(!e.to_string().is_empty()),
            (c, s) => panic!("census and snapshot disagree at {len}: {:?} / {:?}", c.is_ok(), s.is_ok()),
        }
    }
}

#[test]
fn empty_and_foreign_files_are_clear_errors() {
    let msg = |b: &[u8]| both(b.to_vec()).0.unwrap_err().to_string();
    assert!(msg(b"").contains("empty or too short"), "{}", msg(b""));
    assert!(msg(b"PK\x03\x04 this is a zip file, not a heap dump at all").contains("not an HPROF heap dump"));
    assert!(msg(b"JAVA PROFILE 1.0.2\0\0\0\0\x07\0\0\0\0\0\0\0\0").contains("identifier size 7"));
    // A valid header with no records at all.
    let mut only_header = sample();
    only_header.truncate(31);
    assert!(msg(&only_header).contains("no heap dump records"));
}

#[test]
fn unknown_top_level_records_are_skipped_and_counted() {
    let mut bytes = sample();
    let mut w = hprof::Writer::new(hprof::IdSize::Eight);
    hprof::write_record(&mut w, 0x77, b"whatever this is");
    bytes.splice(31..31, w.buf);
    let (c, s) = both(bytes);
    let c = c.unwrap();
    assert_eq!(c.warnings.count(WarningKind::UnknownRecord), 1);
    assert_eq!(
        c.total(),
        Census::build(&Dump::from_vec(sample()), &ReadOptions::default(), &NoProgress).unwrap().total()
    );
    assert!(s.is_ok());
}

#[test]
fn unknown_sub_record_skips_its_segment_with_offset() {
    let full = sample();
    // Find the second heap dump segment and corrupt its first sub-record tag.
    let header = hprof::Header::parse(&full).unwrap();
    let segs: Vec<_> = hprof::Records::new(&full, header.len)
        .filter_map(Result::ok)
        .filter(|r| r.tag == hprof::tag::HEAP_DUMP_SEGMENT)
        .collect();
    let at = segs[1].body_offset() as usize;
    let mut bytes = full.clone();
    bytes[at] = 0x55;
    let c = both(bytes).0.unwrap();
    let w = c.warnings.items().into_iter().find(|w| w.kind == WarningKind::UnreadableSegmentTail).expect("warning");
    assert_eq!(w.first_offset, Some(at as u64));
    assert!(w.detail.contains("unknown heap dump sub-record tag 0x55"), "{}", w.detail);
}

#[test]
fn lengths_past_the_end_allocate_nothing_big() {
    let full = sample();
    let header = hprof::Header::parse(&full).unwrap();
    let recs: Vec<_> = hprof::Records::new(&full, header.len).filter_map(Result::ok).collect();
    LARGEST.store(0, Ordering::Relaxed);
    for r in recs.iter().take(40) {
        let mut bytes = full.clone();
        let len_at = r.offset as usize + 5;
        bytes[len_at..len_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        let _ = both(bytes);
    }
    // Corrupt element counts inside sub-records too: array lengths and field-value lengths.
    for i in (header.len..full.len()).step_by(7) {
        let mut bytes = full.clone();
        let end = (i + 4).min(bytes.len());
        bytes[i..end].fill(0xff);
        let _ = both(bytes);
    }
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest < 1 << 24, "an allocation of {largest} bytes for a {}-byte input", full.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_corruption_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12)) {
        let mut bytes = sample();
        for (i, b) in flips {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        let _ = both(bytes);
    }

    #[test]
    fn random_bytes_after_a_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut bytes = b"JAVA PROFILE 1.0.2\0\0\0\0\x08\0\0\0\0\0\0\0\0".to_vec();
        bytes.extend(tail);
        let _ = both(bytes);
    }
}

/// Inputs the fuzzer once crashed on (`fuzz/`), kept so that they stay fixed.
#[test]
fn fuzz_regressions_read_without_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        let _ = both(bytes);
        n += 1;
    }
    assert!(n > 0, "the regression inputs are there");
}
