//! What a table is: its documented columns and their SQL and Arrow types, the [`Table`] each
//! of the tables implements, and what a scan and one of its batches read.

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::error::{DataFusionError, Result as DfResult};
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
    pub columns: Vec<&'static ColumnDoc>,
}

/// The column every table starts with; the scan fills it, not the table.
pub(super) const HEAP: ColumnDoc = ColumnDoc {
    name: "heap",
    kind: Kind::Small,
    nullable: false,
    doc: "the input it comes from, numbered from 1 in the order given",
};

/// One batch: its rows, and what their columns are built from.
pub(super) struct Batch<'a, R> {
    pub(super) heap: &'a Heap,
    pub(super) scan: &'a Scan,
    pub(super) rows: Vec<R>,
}

impl<R> Batch<'_, R> {
    /// The heap's snapshot.
    pub(super) fn snap(&self) -> &heap::Snapshot {
        &self.heap.snap
    }

    /// A String's text (its first characters), for a scan with `--show-values`; none for
    /// other objects and without the flag.
    pub(super) fn string_text(&self) -> impl Fn(ObjIdx) -> Option<String> + '_ {
        let s = self.snap();
        let string = s.classes().find("java.lang.String").filter(|_| self.scan.settings.show_values);
        move |o| (string == Some(s.class_of(o))).then(|| s.string_value(o, analysis::VALUE_CHARS)).flatten()
    }
}

/// How a batch's rows build a column.
pub(super) type Build<R> = fn(&Batch<'_, R>) -> DfResult<ArrayRef>;

/// A column: as `--help` documents it, beside how a batch of rows of type `R` builds it.
pub(super) struct Column<R> {
    pub(super) doc: ColumnDoc,
    build: Build<R>,
}

/// A column that always has a value.
pub(super) const fn col<R>(name: &'static str, kind: Kind, doc: &'static str, build: Build<R>) -> Column<R> {
    Column { doc: ColumnDoc { name, kind, nullable: false, doc }, build }
}

/// A column that may be NULL.
pub(super) const fn opt<R>(name: &'static str, kind: Kind, doc: &'static str, build: Build<R>) -> Column<R> {
    let mut column = col(name, kind, doc, build);
    column.doc.nullable = true;
    column
}

/// A table declared by its rows: its name, what a row is, its batch size and its columns.
pub(super) struct Declared<R: 'static> {
    pub(super) name: &'static str,
    pub(super) doc: &'static str,
    /// Units (objects, classes, roots) per batch.
    pub(super) batch: u64,
    /// Its columns after `heap`, in the order `--help` lists them.
    pub(super) columns: &'static [Column<R>],
}

impl<R> Declared<R> {
    /// The table `name`, whose rows are `doc`, read `batch` units at a time.
    pub(super) const fn new(name: &'static str, doc: &'static str, batch: u64, columns: &'static [Column<R>]) -> Self {
        Declared { name, doc, batch, columns }
    }
}

/// One table: its declaration, and the rows a scan reads of it.
pub(super) trait Table: Send + Sync + 'static {
    /// What one row is made of.
    type Row: 'static;

    /// Its name, what a row is, its batch size and its columns.
    const DECLARED: Declared<Self::Row>;

    /// Whether a `class = '...'` filter is applied by the scan (the table has a row per object).
    const PUSHES_CLASS: bool = false;

    /// The units of one heap a whole scan covers: objects unless the table says otherwise.
    fn units(&self, h: &Heap) -> u64 {
        h.snap.object_count()
    }

    /// Computes what the scan's columns need of a heap (dominators, depths), once, before the
    /// batches run in parallel.
    fn prepare(&self, _scan: &Scan, _h: &Heap) {}

    /// The rows of one task's units of one heap.
    fn rows(&self, scan: &Scan, t: &Task) -> Vec<Self::Row>;
}

/// A [`Table`] whatever its rows: what the engine's provider holds.
pub(super) trait AnyTable: Send + Sync {
    /// Its name, what a row is, and its columns.
    fn doc(&self) -> TableDoc;

    /// Units per batch.
    fn batch(&self) -> u64;

    /// As [`Table::units`].
    fn units(&self, h: &Heap) -> u64;

    /// As [`Table::PUSHES_CLASS`].
    fn pushes_class(&self) -> bool;

    /// As [`Table::prepare`].
    fn prepare(&self, scan: &Scan, h: &Heap);

    /// Builds the columns `scan.columns` (never `heap`) for one task's units of one heap;
    /// returns the row count and one array per column.
    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)>;
}

impl<T: Table> AnyTable for T {
    fn doc(&self) -> TableDoc {
        let d = &T::DECLARED;
        let columns = std::iter::once(&HEAP).chain(d.columns.iter().map(|c| &c.doc)).collect();
        TableDoc { name: d.name, doc: d.doc, columns }
    }

    fn batch(&self) -> u64 {
        T::DECLARED.batch
    }

    fn units(&self, h: &Heap) -> u64 {
        Table::units(self, h)
    }

    fn pushes_class(&self) -> bool {
        T::PUSHES_CLASS
    }

    fn prepare(&self, scan: &Scan, h: &Heap) {
        Table::prepare(self, scan, h)
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
        let d = &T::DECLARED;
        let batch = Batch { heap: &t.heap, scan, rows: self.rows(scan, t) };
        let columns = scan
            .columns
            .iter()
            .map(|&name| match d.columns.iter().find(|c| c.doc.name == name) {
                Some(c) => (c.build)(&batch),
                None => Err(DataFusionError::Internal(format!("no column {name} in {}", d.name))),
            })
            .collect::<DfResult<_>>()?;
        Ok((batch.rows.len(), columns))
    }
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
