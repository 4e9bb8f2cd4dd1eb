//! The `objects` table: one row per object.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, UInt32Array};
use datafusion::error::Result as DfResult;

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;
use crate::heap_data::UNREACHED;

/// The `objects` table.
pub(super) struct Objects;

impl Table for Objects {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1 << 16
    }

    fn pushes_class(&self) -> bool {
        true
    }

    fn prepare(&self, scan: &Scan, h: &Heap) {
        if scan.wants("retained_bytes") || scan.wants("dominator") || scan.wants("reachable") {
            h.retention();
        }
        if scan.wants("depth") {
            h.depths();
        }
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let h = &t.heap;
        let s = &h.snap;
        let objects = scan.objects(t);
        let string_class = s.classes().find("java.lang.String");
        let columns = project(scan, DOC.name, |name| {
            Ok(Some(match name {
                "id" => ints(objects.iter().map(|&o| s.address(o))),
                "class" => classes_of(h, objects.iter().map(|&o| s.class_of(o)))?,
                "class_id" => ints(objects.iter().map(|&o| s.classes().get(s.class_of(o)).id)),
                "shallow_bytes" => ints(objects.iter().map(|&o| s.shallow_bytes(o))),
                "retained_bytes" => ints(objects.iter().map(|&o| h.retention().retained_bytes(o))),
                "dominator" => {
                    let r = h.retention();
                    some_ints(objects.iter().map(|&o| r.immediate_dominator(o).map(|d| s.address(d))))
                }
                "depth" => {
                    let d = h.depths();
                    Arc::new(
                        objects.iter().map(|o| Some(d[o.index()]).filter(|&d| d != UNREACHED)).collect::<UInt32Array>(),
                    )
                }
                "reachable" => bools(objects.iter().map(|&o| h.retention().is_live(o))),
                "root_kind" => texts(objects.iter().map(|o| h.root_kinds().get(&o.0).map(|k| k.name()))),
                "array_length" => some_ints(objects.iter().map(|&o| s.array_elements(o, 0, 0).map(|(_, n, _)| n))),
                "text" => owned_texts(objects.iter().map(|&o| {
                    let string = scan.settings.show_values && Some(s.class_of(o)) == string_class;
                    string.then(|| s.string_value(o, analysis::VALUE_CHARS)).flatten()
                })),
                _ => return Ok(None),
            }))
        })?;
        Ok((objects.len(), columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
    name: "objects",
    doc: "one row per object",
    columns: &[
        HEAP,
        col("id", Kind::Id, "its id (address) in the dump"),
        col("class", Kind::Class, "its class's name (java.lang.Class for a class object)"),
        col("class_id", Kind::Id, "its class's id (classes.id)"),
        col("shallow_bytes", Kind::Int, "its own size"),
        col(
            "retained_bytes",
            Kind::Int,
            "what the GC would free if it became unreachable; 0 when not strongly reachable",
        ),
        opt(
            "dominator",
            Kind::Id,
            "its immediate dominator's id; NULL when only GC roots dominate it or it is unreachable",
        ),
        opt("depth", Kind::Small, "strong references on the shortest path from a GC root; NULL when unreachable"),
        col("reachable", Kind::Bool, "a chain of strong references leads to it from a GC root"),
        opt("root_kind", Kind::Text, "the kind of GC root it is ('java frame', 'system class', ...)"),
        opt("array_length", Kind::Int, "its length, for an array"),
        opt("text", Kind::Text, "a String's text (the first 200 characters), with --show-values only"),
    ],
};
