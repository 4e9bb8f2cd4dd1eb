//! What a table is: its documented columns and their SQL and Arrow types, the [`Table`] each
//! of the tables implements, and what a scan and one of its batches read.

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::error::Result as DfResult;
use heap::ObjIdx;

use crate::heap_data::Heap;
use crate::Settings;

/// The SQL type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An unsigned 64-bit integer (byte counts, counts).
    Int,
    /// An object's id: an unsigned 64-bit integer, shown `0x…` as every other output shows ids.
    Id,
    /// An unsigned 32-bit integer (heap numbers, depths).
    Small,
    /// Text.
    Text,
    /// A class name (text, kept as an index into the heap's class names).
    Class,
    /// True or false.
    Bool,
}

/// A column of a table, as `--help` and the README list it.
#[derive(Debug)]
pub struct ColumnDoc {
    /// The column's name.
    pub name: &'static str,
    pub(super) kind: Kind,
    pub(super) nullable: bool,
    /// What it holds, in a few words.
    pub doc: &'static str,
}

impl ColumnDoc {
    /// The type as SQL names it.
    pub fn sql_type(&self) -> &'static str {
        match self.kind {
            Kind::Int | Kind::Id => "BIGINT UNSIGNED",
            Kind::Small => "INT UNSIGNED",
            Kind::Text | Kind::Class => "TEXT",
            Kind::Bool => "BOOLEAN",
        }
    }

    /// The column as Arrow's field, ids marked as such.
    pub(super) fn field(&self) -> Field {
        let field = Field::new(self.name, self.data_type(), self.nullable);
        if self.kind == Kind::Id {
            crate::ids::id_field(field)
        } else {
            field
        }
    }

    fn data_type(&self) -> DataType {
        match self.kind {
            Kind::Int | Kind::Id => DataType::UInt64,
            Kind::Small => DataType::UInt32,
            Kind::Text => DataType::Utf8,
            Kind::Class => DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8)),
            Kind::Bool => DataType::Boolean,
        }
    }
}

/// A table, as `--help` and the README list it.
#[derive(Debug)]
pub struct TableDoc {
    /// The table's name.
    pub name: &'static str,
    /// What one row is.
    pub doc: &'static str,
    /// Its columns, `heap` first.
    pub columns: &'static [ColumnDoc],
}

pub(super) const fn col(name: &'static str, kind: Kind, doc: &'static str) -> ColumnDoc {
    ColumnDoc { name, kind, nullable: false, doc }
}

pub(super) const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> ColumnDoc {
    ColumnDoc { name, kind, nullable: true, doc }
}

pub(super) const HEAP: ColumnDoc =
    col("heap", Kind::Small, "the input it comes from, numbered from 1 in the order given");

/// One table: its documentation and columns, and how a scan reads it.
pub(super) trait Table: Send + Sync {
    /// Its name, what a row is, and its columns.
    fn doc(&self) -> &'static TableDoc;

    /// Units (objects, classes, roots) per batch.
    fn batch(&self) -> u64;

    /// The units of one heap a whole scan covers: objects unless the table says otherwise.
    fn units(&self, h: &Heap) -> u64 {
        h.snap.object_count()
    }

    /// Whether a `class = '...'` filter is applied by the scan (the table has a row per object).
    fn pushes_class(&self) -> bool {
        false
    }

    /// Computes what the scan's columns need of a heap (dominators, depths), once, before the
    /// batches run in parallel.
    fn prepare(&self, _scan: &Scan, _h: &Heap) {}

    /// Builds the columns `scan.columns` (never `heap`) for one task's units of one heap;
    /// returns the row count and one array per column.
    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)>;
}

/// What one scan reads.
#[derive(Debug, Clone)]
pub(super) struct Scan {
    /// Column names, in the projection's order, without `heap`.
    pub(super) columns: Vec<&'static str>,
    /// Only instances of the classes of this name (a pushed-down `class = '...'`).
    pub(super) class: Option<String>,
    pub(super) settings: Settings,
}

impl Scan {
    /// Whether the scan reads the column `name`.
    pub(super) fn wants(&self, name: &str) -> bool {
        self.columns.contains(&name)
    }

    /// The classes an object's class must be among, when the scan has a class filter.
    pub(super) fn classes(&self, h: &Heap) -> Option<Vec<bool>> {
        let name = self.class.as_deref()?;
        let mut keep = vec![false; h.snap.classes().len()];
        for c in h.snap.classes().find_all(name) {
            keep[c.index()] = true;
        }
        Some(keep)
    }

    /// The objects of a task the scan reads: its units are object indices, or positions in the
    /// objects a table function chose.
    pub(super) fn objects(&self, t: &Task) -> Vec<ObjIdx> {
        let h = &t.heap;
        let all: Box<dyn Iterator<Item = ObjIdx>> = match &t.chosen {
            Some(list) => Box::new(list[t.units.start as usize..t.units.end as usize].iter().copied()),
            None => Box::new(t.units.clone().map(ObjIdx)),
        };
        match self.classes(h) {
            Some(keep) => all.filter(|&o| keep[h.snap.class_of(o).index()]).collect(),
            None => all.collect(),
        }
    }
}

/// Units of one heap that one batch covers.
#[derive(Debug, Clone)]
pub(super) struct Task {
    pub(super) heap: Arc<Heap>,
    pub(super) number: u32,
    pub(super) units: Range<u64>,
    /// The objects a table function chose, which `units` index; `None` for a whole table.
    pub(super) chosen: Option<Arc<[ObjIdx]>>,
}
