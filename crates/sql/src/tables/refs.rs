//! The `refs` table: one row per reference.

use heap::ObjIdx;

use super::columns::*;
use super::table::*;

/// The `refs` table.
pub(super) struct Refs;

impl Table for Refs {
    /// From, the reference, and its field's name when the scan reads it.
    type Row = (ObjIdx, heap::Edge, Option<String>);

    const DECLARED: Declared<Self::Row> = Declared::new(
        "refs",
        "one row per reference between objects",
        1 << 14,
        &[
            col("from", Kind::Id, "the referring object's id", |b| ints(b.rows.iter().map(|r| b.snap().address(r.0)))),
            col("to", Kind::Id, "the referenced object's id", |b| {
                ints(b.rows.iter().map(|r| b.snap().address(r.1.target)))
            }),
            col("field", Kind::Text, "the field (name, [index], or static name) it is held in", |b| {
                texts(b.rows.iter().map(|r| r.2.as_deref()))
            }),
            col("strength", Kind::Text, "strong, weak, soft, phantom or final", |b| {
                texts(b.rows.iter().map(|r| Some(r.1.strength.name())))
            }),
        ],
    );

    fn rows(&self, scan: &Scan, t: &Task) -> Vec<Self::Row> {
        let s = &t.heap.snap;
        let labels = scan.wants("field");
        let mut rows = Vec::new();
        for o in t.units.clone().map(ObjIdx) {
            if labels {
                rows.extend(s.labeled_edges(o).into_iter().map(|(l, e)| (o, e, Some(s.label_name(o, l)))));
            } else {
                rows.extend(s.edges(o).map(|e| (o, e, None)));
            }
        }
        rows
    }
}
