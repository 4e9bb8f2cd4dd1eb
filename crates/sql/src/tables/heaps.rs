//! The `heaps` table: one row per input.

use datafusion::arrow::array::ArrayRef;
use datafusion::error::Result as DfResult;

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// The `heaps` table.
pub(super) struct Heaps;

impl Table for Heaps {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1
    }

    fn units(&self, _: &Heap) -> u64 {
        1
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let h = &t.heap;
        let s = &h.snap;
        let columns = project(scan, DOC.name, |c| {
            Ok(Some(match c {
                "path" => texts(std::iter::once(Some(h.path.to_string_lossy().as_ref()))),
                "objects" => ints(std::iter::once(s.object_count())),
                "refs" => ints(std::iter::once(s.edge_count())),
                "classes" => ints(std::iter::once(s.classes().len() as u64)),
                "roots" => ints(std::iter::once(s.roots.len() as u64)),
                "shallow_bytes" => ints(std::iter::once(s.census.total().shallow_bytes)),
                "timestamp_ms" => ints(std::iter::once(s.census.header.timestamp_ms)),
                _ => return Ok(None),
            }))
        })?;
        Ok((1, columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
    name: "heaps",
    doc: "one row per input",
    columns: &[
        HEAP,
        col("path", Kind::Text, "the dump file"),
        col("objects", Kind::Int, "objects in the dump"),
        col("refs", Kind::Int, "references between them"),
        col("classes", Kind::Int, "classes loaded"),
        col("roots", Kind::Int, "GC roots the dump declares"),
        col("shallow_bytes", Kind::Int, "bytes of all objects, as the JVM counts them"),
        col("timestamp_ms", Kind::Int, "when the dump was written, in milliseconds since 1970"),
    ],
};
