//! The `fields` table: one row per field of each object.

use heap::{ObjIdx, Slot, Value};

use super::columns::*;
use super::table::*;

/// The `fields` table.
pub(super) struct Fields;

/// The object a reference field's value refers to, none for a primitive or null.
fn target(v: &Value) -> Option<u64> {
    match *v {
        Value::Object(id) if id != 0 => Some(id),
        _ => None,
    }
}

impl Table for Fields {
    /// An object and one of its fields.
    type Row = (ObjIdx, Slot);

    const DECLARED: Declared<Self::Row> = Declared::new(
        "fields",
        "one row per field of each object (static fields: of class objects)",
        1 << 12,
        &[
            col("object", Kind::Id, "the object's id", |b| ints(b.rows.iter().map(|r| b.snap().address(r.0)))),
            col("class", Kind::Class, "the object's class", |b| {
                classes_of(b.heap, b.rows.iter().map(|r| b.snap().class_of(r.0)))
            }),
            col("name", Kind::Text, "the field's name", |b| texts(b.rows.iter().map(|r| Some(r.1.name.as_str())))),
            col("declared_by", Kind::Text, "the class declaring it", |b| {
                texts(b.rows.iter().map(|r| Some(b.snap().classes().get(r.1.declared_by).name.as_str())))
            }),
            col("static", Kind::Bool, "a static field", |b| bools(b.rows.iter().map(|r| r.1.is_static))),
            col("type", Kind::Text, "int, long, boolean, ..., or Object", |b| {
                texts(b.rows.iter().map(|r| {
                    Some(match r.1.value {
                        Value::Object(_) => "Object",
                        Value::Primitive(ty, _) => ty.java_name(),
                    })
                }))
            }),
            col("value", Kind::Text, "a primitive as Java prints it; a reference's id as 0x..., or null", |b| {
                owned_texts(b.rows.iter().map(|r| {
                    Some(match r.1.value {
                        Value::Object(0) => "null".to_owned(),
                        Value::Object(id) => format!("0x{id:x}"),
                        Value::Primitive(ty, bits) => analysis::primitive_text(ty, bits),
                    })
                }))
            }),
            opt("ref", Kind::Id, "a reference's target id; NULL for primitives and null", |b| {
                some_ints(b.rows.iter().map(|r| target(&r.1.value)))
            }),
            opt("string", Kind::Text, "the text of the String referenced, with --show-values only", |b| {
                let text = b.string_text();
                owned_texts(b.rows.iter().map(|r| text(b.snap().find(target(&r.1.value)?)?)))
            }),
        ],
    );

    const PUSHES_CLASS: bool = true;

    fn rows(&self, scan: &Scan, t: &Task) -> Vec<Self::Row> {
        let s = &t.heap.snap;
        let mut rows = Vec::new();
        for o in scan.objects(t) {
            rows.extend(s.slots(o).into_iter().map(|f| (o, f)));
        }
        rows
    }
}
