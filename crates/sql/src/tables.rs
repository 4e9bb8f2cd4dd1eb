//! The tables: their columns, documented once (for `--help`, the README and completion), and
//! how a scan builds the columns a query reads, batch by batch, from a heap.

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, BooleanArray, DictionaryArray, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::catalog::{Session as DfSession, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;
use heap::{ClassIdx, ObjIdx, Value};

use crate::heap_data::{Heap, UNREACHED};
use crate::Settings;

/// The SQL type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
    kind: Kind,
    nullable: bool,
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
    fn field(&self) -> Field {
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

const fn col(name: &'static str, kind: Kind, doc: &'static str) -> ColumnDoc {
    ColumnDoc { name, kind, nullable: false, doc }
}

const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> ColumnDoc {
    ColumnDoc { name, kind, nullable: true, doc }
}

const HEAP: ColumnDoc = col("heap", Kind::Small, "the input it comes from, numbered from 1 in the order given");

/// Every table, in the order `--help` lists them.
pub static TABLES: &[TableDoc] = &[
    TableDoc {
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
    },
    TableDoc {
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
    },
    TableDoc {
        name: "objects",
        doc: "one row per object",
        columns: &[
            HEAP,
            col("id", Kind::Id, "its id (address) in the dump"),
            col("class", Kind::Class, "its class's name (java.lang.Class for a class object)"),
            col("class_id", Kind::Id, "its class's id (classes.id)"),
            col("shallow_bytes", Kind::Int, "its own size"),
            col("retained_bytes", Kind::Int, "what the GC would free if it became unreachable; 0 when not strongly reachable"),
            opt("dominator", Kind::Id, "its immediate dominator's id; NULL when only GC roots dominate it or it is unreachable"),
            opt("depth", Kind::Small, "strong references on the shortest path from a GC root; NULL when unreachable"),
            col("reachable", Kind::Bool, "a chain of strong references leads to it from a GC root"),
            opt("root_kind", Kind::Text, "the kind of GC root it is ('java frame', 'system class', ...)"),
            opt("array_length", Kind::Int, "its length, for an array"),
            opt("text", Kind::Text, "a String's text (the first 200 characters), with --show-values only"),
        ],
    },
    TableDoc {
        name: "refs",
        doc: "one row per reference between objects",
        columns: &[
            HEAP,
            col("from", Kind::Id, "the referring object's id"),
            col("to", Kind::Id, "the referenced object's id"),
            col("field", Kind::Text, "the field (name, [index], or static name) it is held in"),
            col("strength", Kind::Text, "strong, weak, soft, phantom or final"),
        ],
    },
    TableDoc {
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
    },
    TableDoc {
        name: "fields",
        doc: "one row per field of each object (static fields: of class objects)",
        columns: &[
            HEAP,
            col("object", Kind::Id, "the object's id"),
            col("class", Kind::Class, "the object's class"),
            col("name", Kind::Text, "the field's name"),
            col("declared_by", Kind::Text, "the class declaring it"),
            col("static", Kind::Bool, "a static field"),
            col("type", Kind::Text, "int, long, boolean, ..., or Object"),
            col("value", Kind::Text, "a primitive as Java prints it; a reference's id as 0x..., or null"),
            opt("ref", Kind::Id, "a reference's target id; NULL for primitives and null"),
            opt("string", Kind::Text, "the text of the String referenced, with --show-values only"),
        ],
    },
];

fn doc(name: &str) -> &'static TableDoc {
    TABLES.iter().find(|t| t.name == name).expect("a declared table")
}

/// Registers every table over `heaps` in `ctx`.
pub(crate) fn register(ctx: &SessionContext, heaps: &[Arc<Heap>], settings: Settings) -> Result<(), crate::Error> {
    let tables: [(&str, Builder, u64); 6] = [
        ("heaps", heaps_batch, 1),
        ("classes", classes_batch, 1 << 16),
        ("objects", objects_batch, 1 << 16),
        ("refs", refs_batch, 1 << 14),
        ("roots", roots_batch, 1 << 14),
        ("fields", fields_batch, 1 << 12),
    ];
    for (name, build, batch) in tables {
        let t = HeapTable { doc: doc(name), heaps: heaps.to_vec(), build, batch, settings, chosen: None };
        ctx.register_table(name, Arc::new(t))?;
    }
    Ok(())
}

impl HeapTable {
    /// Rows of `objects` for chosen objects only: per heap number, the objects in the order the
    /// rows list them.
    pub(crate) fn chosen_objects(
        heaps: &[Arc<Heap>],
        settings: Settings,
        chosen: Vec<(u32, Arc<[ObjIdx]>)>,
    ) -> HeapTable {
        HeapTable {
            doc: doc("objects"),
            heaps: heaps.to_vec(),
            build: objects_batch,
            batch: 1 << 16,
            settings,
            chosen: Some(chosen),
        }
    }
}

/// Builds the columns `scan.columns` (never `heap`) for one task's units of one heap; returns
/// the row count and one array per column.
type Builder = fn(&Scan, &Task) -> DfResult<(usize, Vec<ArrayRef>)>;

/// What one scan reads.
#[derive(Debug, Clone)]
struct Scan {
    /// Column names, in the projection's order, without `heap`.
    columns: Vec<&'static str>,
    /// Only instances of the classes of this name (a pushed-down `class = '...'`).
    class: Option<String>,
    settings: Settings,
}

impl Scan {
    /// The classes an object's class must be among, when the scan has a class filter.
    fn classes(&self, h: &Heap) -> Option<Vec<bool>> {
        let name = self.class.as_deref()?;
        let mut keep = vec![false; h.snap.classes().len()];
        for c in h.snap.classes().find_all(name) {
            keep[c.index()] = true;
        }
        Some(keep)
    }

    /// The objects of a task the scan reads: its units are object indices, or positions in the
    /// objects a table function chose.
    fn objects(&self, t: &Task) -> Vec<ObjIdx> {
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

/// A table over every heap of the session: a scan builds the projected columns, batch by batch.
pub(crate) struct HeapTable {
    doc: &'static TableDoc,
    heaps: Vec<Arc<Heap>>,
    build: Builder,
    /// Units (objects, classes, roots) per batch.
    batch: u64,
    settings: Settings,
    /// For a table function's answer: the heaps it covers, each with the objects it chose
    /// (rows of `objects` for those only).
    chosen: Option<Vec<(u32, Arc<[ObjIdx]>)>>,
}

impl std::fmt::Debug for HeapTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeapTable").field("name", &self.doc.name).finish()
    }
}

impl HeapTable {
    fn units(&self, h: &Heap) -> u64 {
        match self.doc.name {
            "heaps" => 1,
            "classes" => h.snap.classes().len() as u64,
            "roots" => (h.snap.roots.len() + h.statics().len()) as u64,
            _ => h.snap.object_count(),
        }
    }

    fn pushes_class(&self) -> bool {
        matches!(self.doc.name, "objects" | "fields")
    }
}

/// `column = literal` (either way round, through casts): the column's name and the literal.
fn equality(e: &Expr) -> Option<(&str, &ScalarValue)> {
    fn column(e: &Expr) -> Option<&str> {
        match e {
            Expr::Column(c) => Some(&c.name),
            Expr::Cast(c) => column(&c.expr),
            Expr::TryCast(c) => column(&c.expr),
            _ => None,
        }
    }
    fn literal(e: &Expr) -> Option<&ScalarValue> {
        match e {
            Expr::Literal(v, _) => Some(v),
            _ => None,
        }
    }
    let Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) = e else { return None };
    column(left).zip(literal(right)).or_else(|| column(right).zip(literal(left)))
}

/// The text of a literal, through dictionaries.
pub(crate) fn text_of(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => Some(s),
        ScalarValue::Dictionary(_, inner) => text_of(inner),
        _ => None,
    }
}

/// The non-negative integer of a literal, through dictionaries.
pub(crate) fn number_of(v: &ScalarValue) -> Option<u64> {
    match v {
        ScalarValue::Dictionary(_, inner) => number_of(inner),
        v if v.data_type().is_integer() => v.to_string().parse().ok(),
        _ => None,
    }
}

#[async_trait]
impl TableProvider for HeapTable {
    fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self.doc.columns.iter().map(ColumnDoc::field).collect();
        Arc::new(Schema::new(fields))
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match equality(f) {
                Some(("heap", v)) if number_of(v).is_some() => TableProviderFilterPushDown::Inexact,
                Some(("class", v)) if self.pushes_class() && text_of(v).is_some() => {
                    TableProviderFilterPushDown::Inexact
                }
                _ => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn DfSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let all: Vec<usize> = (0..self.doc.columns.len()).collect();
        let projection = projection.unwrap_or(&all);
        let schema = Arc::new(self.schema().project(projection)?);
        let mut heaps: Vec<u32> = (1..=self.heaps.len() as u32).collect();
        let mut class = None;
        for f in filters {
            match equality(f) {
                Some(("heap", v)) => {
                    let n = number_of(v);
                    heaps.retain(|&h| Some(u64::from(h)) == n);
                }
                Some(("class", v)) if self.pushes_class() => class = text_of(v).map(str::to_owned),
                _ => {}
            }
        }
        let columns: Vec<&'static str> =
            projection.iter().map(|&i| self.doc.columns[i].name).filter(|&n| n != "heap").collect();
        let scan = Scan { columns, class, settings: self.settings };
        let sources: Vec<(u32, Option<Arc<[ObjIdx]>>)> = match &self.chosen {
            Some(chosen) => {
                chosen.iter().filter(|(n, _)| heaps.contains(n)).map(|(n, list)| (*n, Some(list.clone()))).collect()
            }
            None => heaps.iter().map(|&n| (n, None)).collect(),
        };
        // What the columns need is computed here, once, before the batches run in parallel.
        for (n, _) in &sources {
            prepare(&scan, &self.heaps[*n as usize - 1], self.doc.name);
        }
        let parts = state.config().target_partitions().max(1);
        let mut tasks: Vec<Vec<Task>> = vec![Vec::new(); parts];
        let mut next = 0;
        for (n, chosen) in sources {
            let h = &self.heaps[n as usize - 1];
            let units = chosen.as_ref().map_or_else(|| self.units(h), |list| list.len() as u64);
            let mut start = 0;
            while start < units {
                let end = units.min(start + self.batch);
                let task = Task { heap: h.clone(), number: n, units: start..end, chosen: chosen.clone() };
                tasks[next % parts].push(task);
                next += 1;
                start = end;
            }
        }
        let streams: Vec<Arc<dyn PartitionStream>> = tasks
            .into_iter()
            .filter(|t| !t.is_empty())
            .map(|tasks| {
                Arc::new(Part { schema: schema.clone(), tasks, scan: scan.clone(), build: self.build })
                    as Arc<dyn PartitionStream>
            })
            .collect();
        if streams.is_empty() {
            let empty = Arc::new(Part { schema: schema.clone(), tasks: Vec::new(), scan, build: self.build });
            return Ok(Arc::new(StreamingTableExec::try_new(schema, vec![empty], None, [], false, limit)?));
        }
        Ok(Arc::new(StreamingTableExec::try_new(schema, streams, None, [], false, limit)?))
    }
}

/// Computes what the scan's columns need of a heap (dominators, depths), once.
fn prepare(scan: &Scan, h: &Heap, table: &str) {
    let wants = |c: &str| scan.columns.contains(&c);
    match table {
        "objects" => {
            if wants("retained_bytes") || wants("dominator") || wants("reachable") {
                h.retention();
            }
            if wants("depth") {
                h.depths();
            }
        }
        "classes" if wants("retained_bytes") => {
            h.class_retained();
        }
        "roots" => {
            h.statics();
        }
        _ => {}
    }
}

/// Units of one heap that one batch covers.
#[derive(Debug, Clone)]
struct Task {
    heap: Arc<Heap>,
    number: u32,
    units: Range<u64>,
    /// The objects a table function chose, which `units` index; `None` for a whole table.
    chosen: Option<Arc<[ObjIdx]>>,
}

/// One partition of a scan: its batches, built as the engine pulls them.
struct Part {
    schema: SchemaRef,
    tasks: Vec<Task>,
    scan: Scan,
    build: Builder,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part").field("batches", &self.tasks.len()).finish()
    }
}

impl PartitionStream for Part {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (schema, scan, build) = (self.schema.clone(), self.scan.clone(), self.build);
        let out = schema.clone();
        let batches = self.tasks.clone().into_iter().map(move |t| {
            let (rows, mut built) = build(&scan, &t)?;
            let columns: Vec<ArrayRef> = schema
                .fields()
                .iter()
                .map(|f| match f.name().as_str() {
                    "heap" => Arc::new(UInt32Array::from(vec![t.number; rows])) as ArrayRef,
                    _ => built.remove(0),
                })
                .collect();
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            RecordBatch::try_new_with_options(schema.clone(), columns, &options).map_err(DataFusionError::from)
        });
        Box::pin(RecordBatchStreamAdapter::new(out, futures::stream::iter(batches)))
    }
}

fn unknown(table: &str, column: &str) -> DataFusionError {
    DataFusionError::Internal(format!("no column {column} in {table}"))
}

fn ints(values: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(values))
}

fn some_ints(values: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(values.collect::<UInt64Array>())
}

fn texts<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

fn owned_texts(values: impl Iterator<Item = Option<String>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

fn bools(values: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(values.map(Some).collect::<BooleanArray>())
}

/// Class names as a dictionary over the heap's class names.
fn classes_of(h: &Heap, classes: impl Iterator<Item = ClassIdx>) -> DfResult<ArrayRef> {
    let keys = UInt32Array::from_iter_values(classes.map(|c| c.0));
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(keys, h.class_names().clone())?))
}

fn heaps_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
    let h = &t.heap;
    let s = &h.snap;
    let columns = scan
        .columns
        .iter()
        .map(|&c| {
            Ok(match c {
                "path" => texts(std::iter::once(Some(h.path.to_string_lossy().as_ref()))),
                "objects" => ints(std::iter::once(s.object_count())),
                "refs" => ints(std::iter::once(s.edge_count())),
                "classes" => ints(std::iter::once(s.classes().len() as u64)),
                "roots" => ints(std::iter::once(s.roots.len() as u64)),
                "shallow_bytes" => ints(std::iter::once(s.census.total().shallow_bytes)),
                "timestamp_ms" => ints(std::iter::once(s.census.header.timestamp_ms)),
                c => return Err(unknown("heaps", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((1, columns))
}

fn classes_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
    let h = &t.heap;
    let s = &h.snap;
    let classes: Vec<ClassIdx> = t.units.clone().map(|i| ClassIdx(i as u32)).collect();
    let class = |c: &ClassIdx| s.classes().get(*c);
    let columns = scan
        .columns
        .iter()
        .map(|&name| {
            Ok(match name {
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
                c => return Err(unknown("classes", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((classes.len(), columns))
}

fn objects_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
    let h = &t.heap;
    let s = &h.snap;
    let objects = scan.objects(t);
    let string_class = s.classes().find("java.lang.String");
    let columns = scan
        .columns
        .iter()
        .map(|&name| {
            Ok(match name {
                "id" => ints(objects.iter().map(|&o| s.address(o))),
                "class" => classes_of(h, objects.iter().map(|&o| s.class_of(o)))?,
                "class_id" => ints(objects.iter().map(|&o| s.classes().get(s.class_of(o)).id)),
                "shallow_bytes" => ints(objects.iter().map(|&o| s.shallow_bytes(o))),
                "retained_bytes" => ints(objects.iter().map(|&o| h.retention().retained_bytes(o))),
                "dominator" => {
                    let r = h.retention();
                    some_ints(objects.iter().map(|&o| r.immediate_dominator(o).map(|d| s.address(d))))
                }
                "depth" => {
                    let d = h.depths();
                    Arc::new(
                        objects.iter().map(|o| Some(d[o.index()]).filter(|&d| d != UNREACHED)).collect::<UInt32Array>(),
                    )
                }
                "reachable" => bools(objects.iter().map(|&o| h.retention().is_live(o))),
                "root_kind" => texts(objects.iter().map(|o| h.root_kinds().get(&o.0).map(|k| k.name()))),
                "array_length" => some_ints(objects.iter().map(|&o| s.array_elements(o, 0, 0).map(|(_, n, _)| n))),
                "text" => owned_texts(objects.iter().map(|&o| {
                    let string = scan.settings.show_values && Some(s.class_of(o)) == string_class;
                    string.then(|| s.string_value(o, analysis::VALUE_CHARS)).flatten()
                })),
                c => return Err(unknown("objects", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((objects.len(), columns))
}

fn refs_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
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
    let columns = scan
        .columns
        .iter()
        .map(|&name| {
            Ok(match name {
                "from" => ints(rows.iter().map(|r| s.address(r.0))),
                "to" => ints(rows.iter().map(|r| s.address(r.1.target))),
                "strength" => texts(rows.iter().map(|r| Some(r.1.strength.name()))),
                "field" => texts(rows.iter().map(|r| r.2.as_deref())),
                c => return Err(unknown("refs", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((rows.len(), columns))
}

fn roots_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
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
    let columns = scan
        .columns
        .iter()
        .map(|&name| {
            Ok(match name {
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
                c => return Err(unknown("roots", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((rows.len(), columns))
}

fn fields_batch(scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
    let h = &t.heap;
    let s = &h.snap;
    let string_class = s.classes().find("java.lang.String");
    let mut rows: Vec<(ObjIdx, heap::Slot)> = Vec::new();
    for o in scan.objects(t) {
        rows.extend(s.slots(o).into_iter().map(|f| (o, f)));
    }
    let target = |v: &Value| match *v {
        Value::Object(id) if id != 0 => Some(id),
        _ => None,
    };
    let columns = scan
        .columns
        .iter()
        .map(|&name| {
            Ok(match name {
                "object" => ints(rows.iter().map(|r| s.address(r.0))),
                "class" => classes_of(h, rows.iter().map(|r| s.class_of(r.0)))?,
                "name" => texts(rows.iter().map(|r| Some(r.1.name.as_str()))),
                "declared_by" => texts(rows.iter().map(|r| Some(s.classes().get(r.1.declared_by).name.as_str()))),
                "static" => bools(rows.iter().map(|r| r.1.is_static)),
                "type" => texts(rows.iter().map(|r| {
                    Some(match r.1.value {
                        Value::Object(_) => "Object",
                        Value::Primitive(ty, _) => ty.java_name(),
                    })
                })),
                "value" => owned_texts(rows.iter().map(|r| {
                    Some(match r.1.value {
                        Value::Object(0) => "null".to_owned(),
                        Value::Object(id) => format!("0x{id:x}"),
                        Value::Primitive(ty, bits) => analysis::primitive_text(ty, bits),
                    })
                })),
                "ref" => some_ints(rows.iter().map(|r| target(&r.1.value))),
                "string" => owned_texts(rows.iter().map(|r| {
                    let o = s.find(target(&r.1.value)?)?;
                    let string = scan.settings.show_values && Some(s.class_of(o)) == string_class;
                    string.then(|| s.string_value(o, analysis::VALUE_CHARS)).flatten()
                })),
                c => return Err(unknown("fields", c)),
            })
        })
        .collect::<DfResult<_>>()?;
    Ok((rows.len(), columns))
}
