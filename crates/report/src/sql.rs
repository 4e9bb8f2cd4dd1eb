//! A SQL query's answer (`leakscope sql --json`).

use serde::{Deserialize, Serialize};

/// The rows a query returned, with its columns' names and types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SqlAnswer {
    /// The columns, in order.
    pub columns: Vec<SqlColumn>,
    /// One array per row, a value per column: numbers and booleans as JSON has them, text and
    /// other types as text, null for SQL's NULL.
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// One column of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SqlColumn {
    /// Its name, as the query gave it.
    pub name: String,
    /// Its type, as the engine (Apache Arrow) names it: UInt64, Utf8, Boolean, ...
    #[serde(rename = "type")]
    pub data_type: String,
}
