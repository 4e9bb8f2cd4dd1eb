//! The heap as SQL tables, queried with Apache DataFusion: `objects`, `classes`, `refs`,
//! `roots`, `fields` and `heaps`, over one dump or a series of them (every table's first
//! column, `heap`, numbers the inputs from 1).
//!
//! Tables are not copied into Arrow first: each scan builds the columns its query reads, in
//! batches, straight from the snapshot's arrays, so `SELECT class, count(*) FROM objects` reads
//! two columns and costs no dominator tree. Columns that need the dominator tree, the shortest
//! root distances or the per-class retained sums compute them once per heap, on first use. Why
//! DataFusion and not SQLite's virtual tables: `docs/decisions/0015-sql-engine.md`.

mod functions;
mod heap_data;
mod ids;
mod output;
mod tables;

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use functions::{FunctionDoc, FUNCTIONS};
pub use heap_data::Heap;
pub use tables::{tables, ColumnDoc, TableDoc};

/// How a session shows what the heap holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    /// Strings' text in `objects.text` and `fields.string` (they may hold secrets).
    pub show_values: bool,
}

/// Why a query gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine refused the query or failed running it (its message, first line).
    #[error("{0}")]
    Query(String),
    /// The engine's threads could not be started.
    #[error("cannot start the query engine: {0}")]
    Runtime(#[source] std::io::Error),
}

impl From<datafusion::error::DataFusionError> for Error {
    fn from(e: datafusion::error::DataFusionError) -> Error {
        let text = e.strip_backtrace();
        let line = text.lines().next().unwrap_or_default();
        // A refused query's message is the user's answer; the engine's phase name is not.
        Error::Query(plain_message(line.strip_prefix("Error during planning: ").unwrap_or(line)))
    }
}

/// The parser's words without the Rust value around them: `SQL error: ParserError("Expected:
/// ...")` is `SQL syntax error: Expected: ...`.
fn plain_message(line: &str) -> String {
    for kind in ["ParserError", "TokenizerError"] {
        let Some(at) = line.find(&format!("{kind}(\"")) else { continue };
        let inner = &line[at + kind.len() + 2..];
        let inner = inner.strip_suffix("\")").unwrap_or(inner.trim_end_matches(['"', ')']));
        return format!("SQL syntax error: {}", inner.replace("\\\"", "\""));
    }
    line.to_owned()
}

/// Heaps open for queries: the tables registered once, each heap's costly columns kept.
pub struct Session {
    runtime: tokio::runtime::Runtime,
    ctx: SessionContext,
    heaps: Vec<Arc<Heap>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("heaps", &self.heaps.len()).finish()
    }
}

impl Session {
    /// A session over `heaps`, numbered from 1 in the order given.
    pub fn new(heaps: Vec<Heap>, settings: Settings) -> Result<Session, Error> {
        Session::shared(heaps.into_iter().map(Arc::new).collect(), settings)
    }

    /// A session over heaps other sessions may share (the MCP server keeps each dump open
    /// once, its dominator tree with it, whatever set of dumps a query names).
    pub fn shared(heaps: Vec<Arc<Heap>>, settings: Settings) -> Result<Session, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(Error::Runtime)?;
        let config = SessionConfig::new().with_information_schema(true);
        let ctx = SessionContext::new_with_config(config);
        tables::register(&ctx, &heaps, settings)?;
        functions::register(&ctx, &heaps, settings);
        Ok(Session { runtime, ctx, heaps })
    }

    /// The heaps, input 1 first.
    pub fn heaps(&self) -> &[Arc<Heap>] {
        &self.heaps
    }

    /// Runs one SQL statement and collects its rows.
    /// Ids may be written `0x…`, as every output shows them (`WHERE id = 0xea900000`, or
    /// quoted after a comparison); `DESCRIBE` gives SQL's type names, not Arrow's.
    pub fn query(&self, sql: &str) -> Result<Answer, Error> {
        let sql = ids::decimal_ids(sql);
        self.runtime.block_on(async {
            let frame = self.ctx.sql(&sql).await?;
            let schema: SchemaRef = Arc::new(frame.schema().as_arrow().clone());
            let mut batches = frame.collect().await?;
            if sql.trim_start().get(..8).is_some_and(|w| w.eq_ignore_ascii_case("describe")) {
                batches = batches.iter().map(output::sql_type_names).collect::<Result<_, _>>()?;
            }
            Ok(Answer { schema, batches })
        })
    }
}

/// The rows a query returned.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Column names and types.
    pub schema: SchemaRef,
    /// The rows, in the engine's batches.
    pub batches: Vec<RecordBatch>,
}

impl Answer {
    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The column names, in order.
    pub fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }
}

#[cfg(test)]
mod error_tests {
    #[test]
    fn parser_errors_read_as_words_not_rust_values() {
        let line = r#"SQL error: ParserError("Expected: an SQL statement, found: SELEKT at Line: 1, Column: 1")"#;
        assert_eq!(
            super::plain_message(line),
            "SQL syntax error: Expected: an SQL statement, found: SELEKT at Line: 1, Column: 1"
        );
        assert_eq!(super::plain_message("table 'x' not found"), "table 'x' not found");
    }
}
