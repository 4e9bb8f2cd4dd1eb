//! The `classes` table: one row per class.

use datafusion::arrow::array::ArrayRef;
use datafusion::error::Result as DfResult;
use heap::ClassIdx;

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// The `classes` table.
pub(super) struct Classes;

impl Table for Classes {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1 << 16
    }

    fn units(&self, h: &Heap) -> u64 {
        h.snap.classes().len() as u64
    }

    fn prepare(&self, scan: &Scan, h: &Heap) {
        if scan.wants("retained_bytes") {
            h.class_retained();
        }
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let h = &t.heap;
        let s = &h.snap;
        let classes: Vec<ClassIdx> = t.units.clone().map(|i| ClassIdx(i as u32)).collect();
        let class = |c: &ClassIdx| s.classes().get(*c);
        let columns = project(scan, DOC.name, |name| {
            Ok(Some(match name {
                "id" => ints(classes.iter().map(|c| class(c).id)),
                "name" => texts(classes.iter().map(|c| Some(class(c).name.as_str()))),
                "package" => texts(
                    classes.iter().map(|c| Some(heap::names::package_of(&class(c).name)).filter(|p| !p.is_empty())),
                ),
                "loader" => some_ints(classes.iter().map(|c| Some(class(c).loader_id).filter(|&l| l != 0))),
                "super" => {
                    texts(classes.iter().map(|c| class(c).super_class.map(|p| s.classes().get(p).name.as_str())))
                }
                "instances" => ints(classes.iter().map(|&c| s.census.of(c).instances)),
                "shallow_bytes" => ints(classes.iter().map(|&c| s.census.of(c).shallow_bytes)),
                "retained_bytes" => ints(classes.iter().map(|c| h.class_retained()[c.index()])),
                _ => return Ok(None),
            }))
        })?;
        Ok((classes.len(), columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
    name: "classes",
    doc: "one row per class",
    columns: &[
        HEAP,
        col("id", Kind::Id, "the class object's id"),
        col("name", Kind::Text, "the Java name (java.util.HashMap, byte[])"),
        opt("package", Kind::Text, "the package, NULL for none"),
        opt("loader", Kind::Id, "the id of the class loader object, NULL for the boot loader"),
        opt("super", Kind::Text, "the superclass's name"),
        col("instances", Kind::Int, "instances in the dump (as `histogram`)"),
        col("shallow_bytes", Kind::Int, "their bytes (as `histogram`)"),
        col(
            "retained_bytes",
            Kind::Int,
            "what the instances retain together, as MAT's histogram counts it: the retained sizes of the instances no other instance of the class dominates (a lower bound; objects only several instances share are left out)",
        ),
    ],
};
