//! An answer as an aligned text table, CSV, or JSON.

use datafusion::arrow::array::{Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::{Answer, Error};

impl Answer {
    /// Every value as text, row by row (`None` for NULL).
    fn cells(&self) -> Result<Vec<Vec<Option<String>>>, Error> {
        let options = FormatOptions::default();
        let mut rows = Vec::with_capacity(self.row_count());
        let ids: Vec<bool> = self.schema.fields().iter().map(|f| crate::ids::is_id(f)).collect();
        for batch in &self.batches {
            let formatters = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, ArrowError>>()
                .map_err(|e| Error::Query(e.to_string()))?;
            for i in 0..batch.num_rows() {
                let row = batch.columns().iter().zip(&formatters).zip(&ids);
                rows.push(
                    row.map(|((c, f), &id)| {
                        (!c.is_null(i)).then(|| {
                            let text = f.value(i).to_string();
                            match text.parse::<u64>() {
                                Ok(n) if id => format!("0x{n:x}"),
                                _ => text,
                            }
                        })
                    })
                    .collect(),
                );
            }
        }
        Ok(rows)
    }

    /// Every value as text, NULL as `null`.
    fn texts(&self, null: &str) -> Result<Vec<Vec<String>>, Error> {
        let rows = self.cells()?;
        Ok(rows.into_iter().map(|r| r.into_iter().map(|c| c.unwrap_or_else(|| null.to_owned())).collect()).collect())
    }

    /// An aligned table with a header line; numbers right-aligned.
    pub fn to_text(&self) -> Result<String, Error> {
        let names = self.column_names();
        let rows = self.texts("NULL")?;
        let numeric: Vec<bool> = self.schema.fields().iter().map(|f| f.data_type().is_numeric()).collect();
        let mut widths: Vec<usize> = names.iter().map(|n| n.chars().count()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String], out: &mut String| {
            let mut text = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let pad = widths[i] - cell.chars().count();
                if i > 0 {
                    text.push_str("  ");
                }
                if numeric[i] {
                    text.extend(std::iter::repeat_n(' ', pad));
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        let mut out = String::new();
        line(&names, &mut out);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        line(&rule, &mut out);
        for row in &rows {
            line(row, &mut out);
        }
        out.push_str(&format!("({} row{})\n", rows.len(), if rows.len() == 1 { "" } else { "s" }));
        Ok(out)
    }

    /// CSV with a header line (RFC 4180 quoting; NULL as an empty field).
    pub fn to_csv(&self) -> Result<String, Error> {
        let quote = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_owned()
            }
        };
        let mut out = String::new();
        let mut line = |cells: Vec<String>| {
            out.push_str(&cells.iter().map(|c| quote(c)).collect::<Vec<_>>().join(","));
            out.push_str("\r\n");
        };
        line(self.column_names());
        for row in self.texts("")? {
            line(row);
        }
        Ok(out)
    }

    /// `{"columns": [{"name", "type"}], "rows": [[...]]}`: numbers and booleans as JSON's,
    /// ids as `0x…` text, NULL as null, everything else as text.
    pub fn to_json(&self) -> Result<report::SqlAnswer, Error> {
        use serde_json::{json, Value};
        let types: Vec<&DataType> = self.schema.fields().iter().map(|f| f.data_type()).collect();
        let value = |(text, ty): (Option<String>, &&DataType)| {
            let Some(text) = text else { return Value::Null };
            match ty {
                t if t.is_integer() => match (text.parse::<u64>(), text.parse::<i64>()) {
                    (Ok(n), _) => json!(n),
                    (_, Ok(n)) => json!(n),
                    _ => Value::String(text),
                },
                t if t.is_floating() => text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::String(text), Value::Number),
                DataType::Boolean => Value::Bool(text == "true"),
                _ => Value::String(text),
            }
        };
        let rows = self.cells()?.into_iter().map(|r| r.into_iter().zip(&types).map(value).collect()).collect();
        let columns = self
            .schema
            .fields()
            .iter()
            .map(|f| report::SqlColumn { name: f.name().clone(), data_type: sql_type(f.data_type()) })
            .collect();
        Ok(report::SqlAnswer { columns, rows })
    }
}

/// SQL's name of an Arrow type, as the tables' documentation gives it (`Dictionary(UInt32,
/// Utf8)`, how class names are kept, is TEXT to a user); Arrow's own for the rest.
pub(crate) fn sql_type(t: &DataType) -> String {
    match t {
        DataType::UInt64 => "BIGINT UNSIGNED".into(),
        DataType::UInt32 => "INT UNSIGNED".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Int32 => "INT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "TEXT".into(),
        DataType::Dictionary(_, v) => sql_type(v),
        other => other.to_string(),
    }
}

/// A `DESCRIBE` answer's batch with its `data_type` column in SQL's names.
pub(crate) fn sql_type_names(batch: &RecordBatch) -> Result<RecordBatch, datafusion::error::DataFusionError> {
    let Some(at) = batch.schema().index_of("data_type").ok() else { return Ok(batch.clone()) };
    let Some(types) = batch.column(at).as_any().downcast_ref::<StringArray>() else { return Ok(batch.clone()) };
    let named: StringArray = types
        .iter()
        .map(|t| t.map(|t| t.parse::<DataType>().map_or_else(|_| t.to_owned(), |d| sql_type(&d))))
        .collect();
    let mut columns = batch.columns().to_vec();
    columns[at] = std::sync::Arc::new(named);
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}
