//! The `objects` table: one row per object.

use heap::ObjIdx;

use crate::heap_data::{Heap, UNREACHED};

use super::columns::*;
use super::table::*;

/// The `objects` table.
pub(super) struct Objects;

impl Table for Objects {
    type Row = ObjIdx;

    const DECLARED: Declared<ObjIdx> = Declared::new(
        "objects",
        "one row per object",
        1 << 16,
        &[
            col("id", Kind::Id, "its id (address) in the dump", |b| ints(b.rows.iter().map(|&o| b.snap().address(o)))),
            col("class", Kind::Class, "its class's name (java.lang.Class for a class object)", |b| {
                classes_of(b.heap, b.rows.iter().map(|&o| b.snap().class_of(o)))
            }),
            col("class_id", Kind::Id, "its class's id (classes.id)", |b| {
                let s = b.snap();
                ints(b.rows.iter().map(|&o| s.classes().get(s.class_of(o)).id))
            }),
            col("shallow_bytes", Kind::Int, "its own size", |b| {
                ints(b.rows.iter().map(|&o| b.snap().shallow_bytes(o)))
            }),
            col(
                "retained_bytes",
                Kind::Int,
                "what the GC would free if it became unreachable; 0 when not strongly reachable",
                |b| ints(b.rows.iter().map(|&o| b.heap.retention().retained_bytes(o))),
            ),
            opt(
                "dominator",
                Kind::Id,
                "its immediate dominator's id; NULL when only GC roots dominate it or it is unreachable",
                |b| {
                    let r = b.heap.retention();
                    some_ints(b.rows.iter().map(|&o| r.immediate_dominator(o).map(|d| b.snap().address(d))))
                },
            ),
            opt(
                "depth",
                Kind::Small,
                "strong references on the shortest path from a GC root; NULL when unreachable",
                |b| {
                    let d = b.heap.depths();
                    some_smalls(b.rows.iter().map(|o| Some(d[o.index()]).filter(|&d| d != UNREACHED)))
                },
            ),
            col("reachable", Kind::Bool, "a chain of strong references leads to it from a GC root", |b| {
                bools(b.rows.iter().map(|&o| b.heap.retention().is_live(o)))
            }),
            opt("root_kind", Kind::Text, "the kind of GC root it is ('java frame', 'system class', ...)", |b| {
                texts(b.rows.iter().map(|o| b.heap.root_kinds().get(&o.0).map(|k| k.name())))
            }),
            opt("array_length", Kind::Int, "its length, for an array", |b| {
                some_ints(b.rows.iter().map(|&o| b.snap().array_elements(o, 0, 0).map(|(_, n, _)| n)))
            }),
            opt("text", Kind::Text, "a String's text (the first 200 characters), with --show-values only", |b| {
                owned_texts(b.rows.iter().copied().map(b.string_text()))
            }),
        ],
    );

    const PUSHES_CLASS: bool = true;

    fn prepare(&self, scan: &Scan, h: &Heap) {
        if scan.wants("retained_bytes") || scan.wants("dominator") || scan.wants("reachable") {
            h.retention();
        }
        if scan.wants("depth") {
            h.depths();
        }
    }

    fn rows(&self, scan: &Scan, t: &Task) -> Vec<ObjIdx> {
        scan.objects(t)
    }
}
