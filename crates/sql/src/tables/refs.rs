//! The `refs` table: one row per reference.

use datafusion::arrow::array::ArrayRef;
use datafusion::error::Result as DfResult;
use heap::ObjIdx;

use super::columns::*;
use super::table::*;

/// The `refs` table.
pub(super) struct Refs;

impl Table for Refs {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1 << 14
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let s = &t.heap.snap;
        let labels = scan.columns.contains(&"field");
        // (from, to, strength, field)
        let mut rows: Vec<(ObjIdx, heap::Edge, Option<String>)> = Vec::new();
        for o in t.units.clone().map(ObjIdx) {
            if labels {
                rows.extend(s.labeled_edges(o).into_iter().map(|(l, e)| (o, e, Some(s.label_name(o, l)))));
            } else {
                rows.extend(s.edges(o).map(|e| (o, e, None)));
            }
        }
        let columns = project(scan, DOC.name, |name| {
            Ok(Some(match name {
                "from" => ints(rows.iter().map(|r| s.address(r.0))),
                "to" => ints(rows.iter().map(|r| s.address(r.1.target))),
                "strength" => texts(rows.iter().map(|r| Some(r.1.strength.name()))),
                "field" => texts(rows.iter().map(|r| r.2.as_deref())),
                _ => return Ok(None),
            }))
        })?;
        Ok((rows.len(), columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
    name: "refs",
    doc: "one row per reference between objects",
    columns: &[
        HEAP,
        col("from", Kind::Id, "the referring object's id"),
        col("to", Kind::Id, "the referenced object's id"),
        col("field", Kind::Text, "the field (name, [index], or static name) it is held in"),
        col("strength", Kind::Text, "strong, weak, soft, phantom or final"),
    ],
};
