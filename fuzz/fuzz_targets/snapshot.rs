//! Feeds arbitrary bytes to the record reader, the census and the snapshot builder.
//! Any panic, hang or oversized allocation is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = hprof::Header::parse(data) {
        for r in hprof::Records::new(data, h.len).flatten() {
            if let Ok(hprof::Record::HeapDump { body, offset }) = r.parse(h.id_size) {
                for _ in hprof::SubRecords::new(body, offset, h.id_size) {}
            }
        }
    }
    let dump = heap::Dump::from_vec(data.to_vec());
    let opts = heap::ReadOptions::default();
    let _ = heap::Census::build(&dump, &opts, &graph::NoProgress);
    if let Ok(s) = heap::Snapshot::build(dump, &opts, &graph::NoProgress) {
        for o in s.objects().take(64) {
            let _ = s.labeled_edges(o);
        }
    }
});
