//! Columns built from values: the arrays the tables' batches are made of.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, DictionaryArray, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::UInt32Type;
use datafusion::error::Result as DfResult;
use heap::ClassIdx;

use crate::heap_data::Heap;

/// Unsigned 64-bit values.
pub(super) fn ints(values: impl Iterator<Item = u64>) -> DfResult<ArrayRef> {
    Ok(Arc::new(UInt64Array::from_iter_values(values)))
}

/// Unsigned 64-bit values or NULLs.
pub(super) fn some_ints(values: impl Iterator<Item = Option<u64>>) -> DfResult<ArrayRef> {
    Ok(Arc::new(values.collect::<UInt64Array>()))
}

/// Unsigned 32-bit values or NULLs.
pub(super) fn some_smalls(values: impl Iterator<Item = Option<u32>>) -> DfResult<ArrayRef> {
    Ok(Arc::new(values.collect::<UInt32Array>()))
}

/// Texts or NULLs.
pub(super) fn texts<'a>(values: impl Iterator<Item = Option<&'a str>>) -> DfResult<ArrayRef> {
    Ok(Arc::new(values.collect::<StringArray>()))
}

/// Texts made for the column, or NULLs.
pub(super) fn owned_texts(values: impl Iterator<Item = Option<String>>) -> DfResult<ArrayRef> {
    Ok(Arc::new(values.collect::<StringArray>()))
}

/// True or false.
pub(super) fn bools(values: impl Iterator<Item = bool>) -> DfResult<ArrayRef> {
    Ok(Arc::new(values.map(Some).collect::<BooleanArray>()))
}

/// Class names as a dictionary over the heap's class names.
pub(super) fn classes_of(h: &Heap, classes: impl Iterator<Item = ClassIdx>) -> DfResult<ArrayRef> {
    let keys = UInt32Array::from_iter_values(classes.map(|c| c.0));
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(keys, h.class_names().clone())?))
}
