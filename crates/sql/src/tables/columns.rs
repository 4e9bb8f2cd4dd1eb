//! Columns built from values: the arrays the tables' batches are made of.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, DictionaryArray, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::UInt32Type;
use datafusion::error::{DataFusionError, Result as DfResult};
use heap::ClassIdx;

use crate::heap_data::Heap;

use super::table::Scan;

/// The columns `scan` projects, in its order, each built by `column` from its name; a name
/// `column` does not know (`None`) is an internal error naming `table`.
pub(super) fn project(
    scan: &Scan,
    table: &str,
    mut column: impl FnMut(&str) -> DfResult<Option<ArrayRef>>,
) -> DfResult<Vec<ArrayRef>> {
    scan.columns.iter().map(|&name| column(name)?.ok_or_else(|| unknown(table, name))).collect()
}

fn unknown(table: &str, column: &str) -> DataFusionError {
    DataFusionError::Internal(format!("no column {column} in {table}"))
}

pub(super) fn ints(values: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(values))
}

pub(super) fn some_ints(values: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(values.collect::<UInt64Array>())
}

pub(super) fn texts<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

pub(super) fn owned_texts(values: impl Iterator<Item = Option<String>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

pub(super) fn bools(values: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(values.map(Some).collect::<BooleanArray>())
}

/// Class names as a dictionary over the heap's class names.
pub(super) fn classes_of(h: &Heap, classes: impl Iterator<Item = ClassIdx>) -> DfResult<ArrayRef> {
    let keys = UInt32Array::from_iter_values(classes.map(|c| c.0));
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(keys, h.class_names().clone())?))
}
