//! The tables: their columns, documented once (for `--help`, the README and completion), and
//! how a scan builds the columns a query reads, batch by batch, from a heap.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, UInt32Array};
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
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
use heap::ObjIdx;

use crate::heap_data::Heap;
use crate::Settings;

mod classes;
mod columns;
mod fields;
mod heaps;
mod objects;
mod refs;
mod roots;
mod table;

use table::{AnyTable, Scan, Task};
pub use table::{ColumnDoc, TableDoc};

/// Every table, in the order `--help` lists them.
static ALL: [&dyn AnyTable; 6] =
    [&heaps::Heaps, &classes::Classes, &objects::Objects, &refs::Refs, &roots::Roots, &fields::Fields];

/// Every table's name, what a row is and its columns, in the order `--help` lists them.
pub fn tables() -> Vec<TableDoc> {
    ALL.iter().map(|t| t.doc()).collect()
}

/// Registers every table over `heaps` in `ctx`.
pub(crate) fn register(ctx: &SessionContext, heaps: &[Arc<Heap>], settings: Settings) -> Result<(), crate::Error> {
    for table in ALL {
        let t = HeapTable { table, heaps: heaps.to_vec(), settings, chosen: None };
        ctx.register_table(table.doc().name, Arc::new(t))?;
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
        HeapTable { table: &objects::Objects, heaps: heaps.to_vec(), settings, chosen: Some(chosen) }
    }
}

/// A table over every heap of the session: a scan builds the projected columns, batch by batch.
pub(crate) struct HeapTable {
    table: &'static dyn AnyTable,
    heaps: Vec<Arc<Heap>>,
    settings: Settings,
    /// For a table function's answer: the heaps it covers, each with the objects it chose
    /// (rows of `objects` for those only).
    chosen: Option<Vec<(u32, Arc<[ObjIdx]>)>>,
}

impl std::fmt::Debug for HeapTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeapTable").field("name", &self.table.doc().name).finish()
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
        let fields: Vec<Field> = self.table.doc().columns.iter().map(|c| c.field()).collect();
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
                Some(("class", v)) if self.table.pushes_class() && text_of(v).is_some() => {
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
        let doc = self.table.doc();
        let all: Vec<usize> = (0..doc.columns.len()).collect();
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
                Some(("class", v)) if self.table.pushes_class() => class = text_of(v).map(str::to_owned),
                _ => {}
            }
        }
        let columns: Vec<&'static str> =
            projection.iter().map(|&i| doc.columns[i].name).filter(|&n| n != "heap").collect();
        let scan = Scan { columns, class, settings: self.settings };
        let sources: Vec<(u32, Option<Arc<[ObjIdx]>>)> = match &self.chosen {
            Some(chosen) => {
                chosen.iter().filter(|(n, _)| heaps.contains(n)).map(|(n, list)| (*n, Some(list.clone()))).collect()
            }
            None => heaps.iter().map(|&n| (n, None)).collect(),
        };
        // What the columns need is computed here, once, before the batches run in parallel.
        for (n, _) in &sources {
            self.table.prepare(&scan, &self.heaps[*n as usize - 1]);
        }
        let parts = state.config().target_partitions().max(1);
        let mut tasks: Vec<Vec<Task>> = vec![Vec::new(); parts];
        let mut next = 0;
        for (n, chosen) in sources {
            let h = &self.heaps[n as usize - 1];
            let units = chosen.as_ref().map_or_else(|| self.table.units(h), |list| list.len() as u64);
            let mut start = 0;
            while start < units {
                let end = units.min(start + self.table.batch());
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
                Arc::new(Part { schema: schema.clone(), tasks, scan: scan.clone(), table: self.table })
                    as Arc<dyn PartitionStream>
            })
            .collect();
        if streams.is_empty() {
            let empty = Arc::new(Part { schema: schema.clone(), tasks: Vec::new(), scan, table: self.table });
            return Ok(Arc::new(StreamingTableExec::try_new(schema, vec![empty], None, [], false, limit)?));
        }
        Ok(Arc::new(StreamingTableExec::try_new(schema, streams, None, [], false, limit)?))
    }
}

/// One partition of a scan: its batches, built as the engine pulls them.
struct Part {
    schema: SchemaRef,
    tasks: Vec<Task>,
    scan: Scan,
    table: &'static dyn AnyTable,
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
        let (schema, scan, table) = (self.schema.clone(), self.scan.clone(), self.table);
        let out = schema.clone();
        let batches = self.tasks.clone().into_iter().map(move |t| {
            let (rows, mut built) = table.build(&scan, &t)?;
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
