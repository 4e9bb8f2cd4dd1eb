//! Table functions for what SQL alone makes slow: the objects one object dominates, the
//! shortest path from a GC root, what a group of objects retains, and a class's instances with
//! its subclasses'. Each one is computed when a query names it; its rows are rows of `objects`
//! (with every column, the costly ones computed only when read), or the path's steps.

use std::str::FromStr;
use std::sync::Arc;

use analysis::{Closures, ParentError, PathFinder, Selector};
use datafusion::arrow::array::{ArrayRef, BooleanArray, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{MemTable, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::Expr;
use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;
use heap::ObjIdx;

use crate::heap_data::Heap;
use crate::tables::{number_of, text_of, HeapTable};
use crate::Settings;

/// A table function, as `--help` and the README list it.
#[derive(Debug)]
pub struct FunctionDoc {
    /// How it is called, optional arguments in brackets.
    pub signature: &'static str,
    /// What its rows are.
    pub doc: &'static str,
}

/// Every table function, in the order `--help` lists them. Without `heap`, a function answers
/// for every heap of the session where its argument names something.
pub static FUNCTIONS: &[FunctionDoc] = &[
    FunctionDoc {
        signature: "dominated(id [, heap])",
        doc: "rows of objects: those the object immediately dominates (its children in the dominator tree); id 0 gives the top of the tree, the objects only GC roots dominate",
    },
    FunctionDoc {
        signature: "path_to_root(id [, heap])",
        doc: "(heap, step, id, class, field, folded, root): the shortest strong path from a GC root to the object, the root object at step 0; field is how the previous step holds this one; folded marks a class loader's bookkeeping that `paths` hides",
    },
    FunctionDoc {
        signature: "retained_set(selector [, heap])",
        doc: "rows of objects: what the GC would free if the selected objects became unreachable together; selectors as `retained --select` takes them (class:NAME, class:NAME+, id:0xADDR, static:CLASS.FIELD, rule:A>B>C)",
    },
    FunctionDoc {
        signature: "instances_of(class [, with_subclasses [, heap]])",
        doc: "rows of objects: the instances of the class, and of its subclasses when with_subclasses is true",
    },
];

/// Registers every table function over `heaps` in `ctx`.
pub(crate) fn register(ctx: &SessionContext, heaps: &[Arc<Heap>], settings: Settings) {
    for f in FUNCTIONS {
        let name = f.signature.split('(').next().expect("a signature");
        let most = f.signature.matches(',').count() + 1;
        let function = Function { name, most, heaps: heaps.to_vec(), settings };
        ctx.register_udtf(name, Arc::new(function));
    }
}

/// One table function over the session's heaps.
#[derive(Debug)]
struct Function {
    name: &'static str,
    /// The most arguments it takes.
    most: usize,
    heaps: Vec<Arc<Heap>>,
    settings: Settings,
}

impl TableFunctionImpl for Function {
    fn call_with_args(&self, args: TableFunctionArgs) -> DfResult<Arc<dyn TableProvider>> {
        let args = Args { function: self.name, exprs: args.exprs() };
        if args.exprs.len() > self.most {
            return Err(plan(format!("{} takes at most {} arguments", self.name, self.most)));
        }
        match self.name {
            "dominated" => {
                let id = args.id(0)?;
                self.objects(&args, 1, |h| {
                    let parent = (id != 0).then(|| ParentError::find(&h.snap, id)).transpose().map_err(plan)?;
                    Ok(h.retention().children(parent))
                })
            }
            "retained_set" => {
                let selector = Selector::from_str(&args.text(0)?).map_err(plan)?;
                self.objects(&args, 1, move |h| {
                    let s = &h.snap;
                    let group = selector.select(s).map_err(plan)?;
                    Ok(Closures::new(s, h.progress()).retained_set(&group).iter().collect())
                })
            }
            "instances_of" => {
                let name = args.text(0)?;
                let subclasses = args.boolean(1)?.unwrap_or(false);
                let selector = Selector::Class { name, subclasses };
                self.objects(&args, 2, move |h| selector.select(&h.snap).map_err(plan))
            }
            "path_to_root" => self.path_to_root(&args),
            other => Err(DataFusionError::Internal(format!("no table function {other}"))),
        }
    }
}

impl Function {
    /// The heaps a call covers: the one its argument at `heap_arg` names, or all of them.
    fn heaps(&self, args: &Args, heap_arg: usize) -> DfResult<Vec<(u32, &Arc<Heap>)>> {
        let all = self.heaps.iter().enumerate().map(|(i, h)| (i as u32 + 1, h));
        match args.number(heap_arg)? {
            None => Ok(all.collect()),
            Some(n) if n >= 1 && n <= self.heaps.len() as u64 => Ok(all.filter(|(i, _)| u64::from(*i) == n).collect()),
            Some(n) => Err(plan(format!("{}: no heap {n}; this session has {}", self.name, self.heaps.len()))),
        }
    }

    /// Rows of `objects` for the objects `choose` picks in each heap covered. A heap where
    /// `choose` fails contributes no rows; the call fails when it fails on every heap.
    fn objects(
        &self,
        args: &Args,
        heap_arg: usize,
        choose: impl Fn(&Heap) -> DfResult<Vec<ObjIdx>>,
    ) -> DfResult<Arc<dyn TableProvider>> {
        let mut chosen = Vec::new();
        let mut first_error = None;
        for (n, h) in self.heaps(args, heap_arg)? {
            match choose(h) {
                Ok(objects) => chosen.push((n, Arc::from(objects))),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match (chosen.is_empty(), first_error) {
            (true, Some(e)) => Err(e),
            _ => Ok(Arc::new(HeapTable::chosen_objects(&self.heaps, self.settings, chosen))),
        }
    }

    /// The steps of the shortest strong path from a GC root to the object, per heap covered.
    fn path_to_root(&self, args: &Args) -> DfResult<Arc<dyn TableProvider>> {
        let id = args.id(0)?;
        let mut rows = PathRows::default();
        let mut found = false;
        for (n, h) in self.heaps(args, 1)? {
            let s = &h.snap;
            let Some(o) = s.find(id) else { continue };
            found = true;
            let Some(path) = PathFinder::new(s, h.progress()).path(o) else { continue };
            for (i, step) in analysis::report_steps(s, &path.steps).into_iter().enumerate() {
                rows.heap.push(n);
                rows.step.push(i as u32);
                rows.id.push(step.id.0);
                rows.class.push(step.class);
                rows.field.push(step.field);
                rows.folded.push(step.folded);
                rows.root.push((i == 0).then(|| path.root.label.clone()));
            }
        }
        if !found {
            return Err(plan(format!("path_to_root: no object at address 0x{id:x} in any heap")));
        }
        rows.table()
    }
}

/// The columns of `path_to_root`'s rows.
#[derive(Default)]
struct PathRows {
    heap: Vec<u32>,
    step: Vec<u32>,
    id: Vec<u64>,
    class: Vec<String>,
    field: Vec<Option<String>>,
    folded: Vec<bool>,
    root: Vec<Option<String>>,
}

impl PathRows {
    fn table(self) -> DfResult<Arc<dyn TableProvider>> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("heap", DataType::UInt32, false),
            Field::new("step", DataType::UInt32, false),
            crate::ids::id_field(Field::new("id", DataType::UInt64, false)),
            Field::new("class", DataType::Utf8, false),
            Field::new("field", DataType::Utf8, true),
            Field::new("folded", DataType::Boolean, false),
            Field::new("root", DataType::Utf8, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt32Array::from(self.heap)),
            Arc::new(UInt32Array::from(self.step)),
            Arc::new(UInt64Array::from(self.id)),
            Arc::new(StringArray::from(self.class)),
            Arc::new(StringArray::from(self.field)),
            Arc::new(BooleanArray::from(self.folded)),
            Arc::new(StringArray::from(self.root)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}

fn plan(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Plan(e.to_string())
}

/// A call's arguments, read as the function expects them (literals only).
struct Args<'a> {
    function: &'static str,
    exprs: &'a [Expr],
}

impl Args<'_> {
    fn literal(&self, i: usize) -> Option<&ScalarValue> {
        match self.exprs.get(i)? {
            Expr::Literal(v, _) if !v.is_null() => Some(v),
            _ => None,
        }
    }

    fn wrong(&self, i: usize, wanted: &str) -> DataFusionError {
        let given = self.exprs.get(i).map_or_else(|| "nothing".to_owned(), |e| e.to_string());
        plan(format!("{}: argument {} must be {wanted}, not {given}", self.function, i + 1))
    }

    fn text(&self, i: usize) -> DfResult<String> {
        self.literal(i).and_then(text_of).map(str::to_owned).ok_or_else(|| self.wrong(i, "a text"))
    }

    /// An object id: a number, 0x-prefixed hexadecimal, or either as text.
    fn id(&self, i: usize) -> DfResult<u64> {
        let parsed = match self.literal(i) {
            Some(v) if v.data_type().is_integer() => number_of(v),
            // SQL's 0x7f3a10 is a binary literal: its bytes, most significant first.
            Some(ScalarValue::Binary(Some(bytes))) if bytes.len() <= 8 => {
                Some(bytes.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b)))
            }
            Some(v) => text_of(v).and_then(|s| match s.parse::<report::ObjectId>() {
                Ok(id) if s.starts_with("0x") || s.starts_with("0X") => Some(id.0),
                _ => s.parse().ok(),
            }),
            None => None,
        };
        parsed.ok_or_else(|| self.wrong(i, "an object id (a number, or '0x…')"))
    }

    /// An optional non-negative number.
    fn number(&self, i: usize) -> DfResult<Option<u64>> {
        if i >= self.exprs.len() {
            return Ok(None);
        }
        self.literal(i).and_then(number_of).map(Some).ok_or_else(|| self.wrong(i, "a heap number"))
    }

    /// An optional true or false.
    fn boolean(&self, i: usize) -> DfResult<Option<bool>> {
        if i >= self.exprs.len() {
            return Ok(None);
        }
        match self.literal(i) {
            Some(ScalarValue::Boolean(Some(b))) => Ok(Some(*b)),
            _ => Err(self.wrong(i, "true or false")),
        }
    }
}
