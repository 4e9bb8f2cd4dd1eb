//! Feeds arbitrary bytes to the V8 heap snapshot reader, and runs the dominator computation
//! and every accessor on what it accepts. Any panic, hang or oversized allocation is a finding
//! (column capacities are bounded by the input's length, not by `node_count`).
#![no_main]

use graph::NoProgress;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = heapsnapshot::read(data.to_vec(), &NoProgress) {
        for n in h.nodes() {
            let _ = (h.class_name(n), h.self_size(n), h.id(n), h.detachedness(n));
            let _ = (h.allocation_stack(n), h.allocated_at_site(n));
            h.edges(n).for_each(|e| drop(h.edge_label(&e)));
        }
        let _ = graph::dominators(&h, 0, &NoProgress);
        let _ = h.string_index("_events");
    }
});
