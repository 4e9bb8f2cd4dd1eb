//! The `roots` table: one row per GC root and static reference.

use datafusion::arrow::array::ArrayRef;
use datafusion::error::Result as DfResult;

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// The `roots` table.
pub(super) struct Roots;

impl Table for Roots {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1 << 14
    }

    fn units(&self, h: &Heap) -> u64 {
        (h.snap.roots.len() + h.statics().len()) as u64
    }

    fn prepare(&self, _: &Scan, h: &Heap) {
        h.statics();
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let h = &t.heap;
        let s = &h.snap;
        let declared = s.roots.len() as u64;
        let statics = h.statics();
        // A declared root, or a static field (index into the statics).
        let rows: Vec<Result<&heap::Root, usize>> = t
            .units
            .clone()
            .map(|i| if i < declared { Ok(&s.roots[i as usize]) } else { Err((i - declared) as usize) })
            .collect();
        let thread = |r: &heap::Root| match r.detail {
            heap::RootDetail::Thread { thread, frame } => Some((thread, frame)),
            _ => None,
        };
        let columns = project(scan, DOC.name, |name| {
            Ok(Some(match name {
                "object" => ints(rows.iter().map(|r| s.address(r.map_or_else(|i| statics[i].2, |r| r.object)))),
                "kind" => texts(rows.iter().map(|r| Some(r.map_or("static field", |r| r.kind.name())))),
                "thread" => {
                    owned_texts(rows.iter().map(|r| r.ok().and_then(thread).map(|(t, _)| analysis::thread_label(s, t))))
                }
                "frame" => owned_texts(rows.iter().map(|r| {
                    let (t, f) = r.ok().and_then(thread)?;
                    s.threads.get(t)?.frames.get(f? as usize).map(analysis::frame_text)
                })),
                "static_field" => owned_texts(rows.iter().map(|r| {
                    let &(c, i, _) = statics.get(*r.as_ref().err()?)?;
                    let class = s.classes().get(c);
                    Some(format!("{}.{}", class.name, class.statics.get(usize::from(i))?.name))
                })),
                _ => return Ok(None),
            }))
        })?;
        Ok((rows.len(), columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
    name: "roots",
    doc: "one row per GC root the dump declares, and per static reference field",
    columns: &[
        HEAP,
        col("object", Kind::Id, "the object held"),
        col("kind", Kind::Text, "'java frame', 'system class', 'jni global', 'thread', 'static field', ..."),
        opt("thread", Kind::Text, "the thread holding it (its name when the dump has it)"),
        opt("frame", Kind::Text, "the stack frame holding it"),
        opt("static_field", Kind::Text, "the static field holding it (Class.field)"),
    ],
};
