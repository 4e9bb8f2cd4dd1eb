//! The `roots` table: one row per GC root and static reference.

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// The `roots` table.
pub(super) struct Roots;

/// A row of `roots`: a declared root, or a static reference field.
#[derive(Debug, Clone, Copy)]
pub(super) enum RootRow {
    /// An index into the dump's roots.
    Declared(usize),
    /// An index into the heap's static reference fields.
    Static(usize),
}

impl RootRow {
    /// The declared root of this row, if it is one.
    fn root<'a>(self, b: &'a Batch<'_, RootRow>) -> Option<&'a heap::Root> {
        match self {
            RootRow::Declared(i) => b.snap().roots.get(i),
            RootRow::Static(_) => None,
        }
    }

    /// The thread and frame number holding the row's root, if a thread does.
    fn thread(self, b: &Batch<'_, RootRow>) -> Option<(usize, Option<u32>)> {
        match self.root(b)?.detail {
            heap::RootDetail::Thread { thread, frame } => Some((thread, frame)),
            _ => None,
        }
    }
}

impl Table for Roots {
    type Row = RootRow;

    const DECLARED: Declared<RootRow> = Declared::new(
        "roots",
        "one row per GC root the dump declares, and per static reference field",
        1 << 14,
        &[
            col("object", Kind::Id, "the object held", |b| {
                let statics = b.heap.statics();
                ints(b.rows.iter().map(|&r| {
                    b.snap().address(match r {
                        RootRow::Declared(i) => b.snap().roots[i].object,
                        RootRow::Static(i) => statics[i].2,
                    })
                }))
            }),
            col("kind", Kind::Text, "'java frame', 'system class', 'jni global', 'thread', 'static field', ...", |b| {
                texts(b.rows.iter().map(|&r| Some(r.root(b).map_or("static field", |r| r.kind.name()))))
            }),
            opt("thread", Kind::Text, "the thread holding it (its name when the dump has it)", |b| {
                owned_texts(b.rows.iter().map(|&r| r.thread(b).map(|(t, _)| analysis::thread_label(b.snap(), t))))
            }),
            opt("frame", Kind::Text, "the stack frame holding it", |b| {
                owned_texts(b.rows.iter().map(|&r| {
                    let (t, f) = r.thread(b)?;
                    b.snap().threads.get(t)?.frames.get(f? as usize).map(analysis::frame_text)
                }))
            }),
            opt("static_field", Kind::Text, "the static field holding it (Class.field)", |b| {
                let statics = b.heap.statics();
                owned_texts(b.rows.iter().map(|&r| {
                    let RootRow::Static(i) = r else { return None };
                    let &(c, field, _) = statics.get(i)?;
                    let class = b.snap().classes().get(c);
                    Some(format!("{}.{}", class.name, class.statics.get(usize::from(field))?.name))
                }))
            }),
        ],
    );

    fn units(&self, h: &Heap) -> u64 {
        (h.snap.roots.len() + h.statics().len()) as u64
    }

    fn prepare(&self, _: &Scan, h: &Heap) {
        h.statics();
    }

    fn rows(&self, _: &Scan, t: &Task) -> Vec<RootRow> {
        let declared = t.heap.snap.roots.len() as u64;
        let row = |i: u64| {
            if i < declared {
                RootRow::Declared(i as usize)
            } else {
                RootRow::Static((i - declared) as usize)
            }
        };
        t.units.clone().map(row).collect()
    }
}
