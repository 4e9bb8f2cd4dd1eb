//! The `classes` table: one row per class.

use heap::ClassIdx;

use crate::heap_data::Heap;

use super::columns::*;
use super::table::*;

/// What `classes.retained_bytes` counts.
const RETAINED: &str = "what the instances retain together, as MAT's histogram counts it: the retained sizes of the instances no other instance of the class dominates (a lower bound; objects only several instances share are left out)";

/// The `classes` table.
pub(super) struct Classes;

impl Table for Classes {
    type Row = ClassIdx;

    const DECLARED: Declared<ClassIdx> = Declared::new(
        "classes",
        "one row per class",
        1 << 16,
        &[
            col("id", Kind::Id, "the class object's id", |b| {
                ints(b.rows.iter().map(|&c| b.snap().classes().get(c).id))
            }),
            col("name", Kind::Text, "the Java name (java.util.HashMap, byte[])", |b| {
                texts(b.rows.iter().map(|&c| Some(b.snap().classes().get(c).name.as_str())))
            }),
            opt("package", Kind::Text, "the package, NULL for none", |b| {
                let package = |c| heap::names::package_of(&b.snap().classes().get(c).name);
                texts(b.rows.iter().map(|&c| Some(package(c)).filter(|p| !p.is_empty())))
            }),
            opt("loader", Kind::Id, "the id of the class loader object, NULL for the boot loader", |b| {
                some_ints(b.rows.iter().map(|&c| Some(b.snap().classes().get(c).loader_id).filter(|&l| l != 0)))
            }),
            opt("super", Kind::Text, "the superclass's name", |b| {
                let classes = b.snap().classes();
                texts(b.rows.iter().map(|&c| classes.get(c).super_class.map(|p| classes.get(p).name.as_str())))
            }),
            col("instances", Kind::Int, "instances in the dump (as `histogram`)", |b| {
                ints(b.rows.iter().map(|&c| b.snap().census.of(c).instances))
            }),
            col("shallow_bytes", Kind::Int, "their bytes (as `histogram`)", |b| {
                ints(b.rows.iter().map(|&c| b.snap().census.of(c).shallow_bytes))
            }),
            col("retained_bytes", Kind::Int, RETAINED, |b| {
                ints(b.rows.iter().map(|c| b.heap.class_retained()[c.index()]))
            }),
        ],
    );

    fn units(&self, h: &Heap) -> u64 {
        h.snap.classes().len() as u64
    }

    fn prepare(&self, scan: &Scan, h: &Heap) {
        if scan.wants("retained_bytes") {
            h.class_retained();
        }
    }

    fn rows(&self, _: &Scan, t: &Task) -> Vec<ClassIdx> {
        t.units.clone().map(|i| ClassIdx(i as u32)).collect()
    }
}
