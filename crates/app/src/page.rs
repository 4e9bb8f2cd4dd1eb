//! A page of a long list: which items an answer holds, and how it says where the rest are.

use serde_json::Value;

/// Which items of a long list an answer holds.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// Index of the first item.
    pub offset: usize,
    /// Items at most.
    pub limit: usize,
}

impl Page {
    /// Cuts the array at `key` of `doc` to this page; when some are left, says in `next.KEY`
    /// how many and the offset that reads them (a key no model uses).
    pub fn cut(self, mut doc: Value, key: &str) -> Value {
        let Some(items) = doc.get_mut(key).and_then(Value::as_array_mut) else { return doc };
        let total = items.len();
        let kept: Vec<Value> = items.drain(..).skip(self.offset).take(self.limit).collect();
        let end = self.offset + kept.len();
        *items = kept;
        if end < total {
            next(&mut doc, key, total - end, end);
        }
        doc
    }
}

/// Records in `next.KEY` that `remaining` items of the list `key` follow, from `offset`.
pub(crate) fn next(doc: &mut Value, key: &str, remaining: usize, offset: usize) {
    if !doc["next"].is_object() {
        doc["next"] = serde_json::json!({});
    }
    doc["next"][key] = serde_json::json!({"remaining": remaining, "offset": offset});
}
