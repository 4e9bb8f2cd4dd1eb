//! A SQL query's answer (`leakscope sql --json`).

use serde::{Deserialize, Serialize};

/// The rows a query returned, with its columns' names and types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SqlAnswer {
    /// The columns, in order.
    pub columns: Vec<SqlColumn>,
    /// One array per row, a value per column: numbers and booleans as JSON has them, object
    /// ids as `0x…` text, text and other types as text, null for SQL's NULL.
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// One column of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SqlColumn {
    /// Its name, as the query gave it.
    pub name: String,
    /// Its type as SQL names it (BIGINT UNSIGNED, TEXT, BOOLEAN, ...); ids are BIGINT UNSIGNED
    /// written as `0x…` text in the rows.
    #[serde(rename = "type")]
    pub data_type: String,
}
