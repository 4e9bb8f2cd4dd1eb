//! The `heaps` table: one row per input.

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// The `heaps` table.
pub(super) struct Heaps;

impl Table for Heaps {
    /// A heap has one row, which needs nothing of its own.
    type Row = ();

    const DECLARED: Declared<()> = Declared::new(
        "heaps",
        "one row per input",
        1,
        &[
            col("path", Kind::Text, "the dump file", |b| {
                owned_texts(b.rows.iter().map(|_| Some(b.heap.path.to_string_lossy().into_owned())))
            }),
            col("objects", Kind::Int, "objects in the dump", |b| ints(b.rows.iter().map(|_| b.snap().object_count()))),
            col("refs", Kind::Int, "references between them", |b| ints(b.rows.iter().map(|_| b.snap().edge_count()))),
            col("classes", Kind::Int, "classes loaded", |b| {
                ints(b.rows.iter().map(|_| b.snap().classes().len() as u64))
            }),
            col("roots", Kind::Int, "GC roots the dump declares", |b| {
                ints(b.rows.iter().map(|_| b.snap().roots.len() as u64))
            }),
            col("shallow_bytes", Kind::Int, "bytes of all objects, as the JVM counts them", |b| {
                ints(b.rows.iter().map(|_| b.snap().census.total().shallow_bytes))
            }),
            col("timestamp_ms", Kind::Int, "when the dump was written, in milliseconds since 1970", |b| {
                ints(b.rows.iter().map(|_| b.snap().census.header.timestamp_ms))
            }),
        ],
    );

    fn units(&self, _: &Heap) -> u64 {
        1
    }

    fn rows(&self, _: &Scan, _: &Task) -> Vec<()> {
        vec![()]
    }
}
