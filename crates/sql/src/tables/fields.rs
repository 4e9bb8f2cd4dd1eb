//! The `fields` table: one row per field of each object.

use datafusion::arrow::array::ArrayRef;
use datafusion::error::Result as DfResult;
use heap::{ObjIdx, Value};

use super::columns::*;
use super::table::*;

/// The `fields` table.
pub(super) struct Fields;

impl Table for Fields {
    fn doc(&self) -> &'static TableDoc {
        &DOC
    }

    fn batch(&self) -> u64 {
        1 << 12
    }

    fn pushes_class(&self) -> bool {
        true
    }

    fn build(&self, scan: &Scan, t: &Task) -> DfResult<(usize, Vec<ArrayRef>)> {
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
        let columns = project(scan, DOC.name, |name| {
            Ok(Some(match name {
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
                _ => return Ok(None),
            }))
        })?;
        Ok((rows.len(), columns))
    }
}

pub(super) const DOC: TableDoc = TableDoc {
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
};
