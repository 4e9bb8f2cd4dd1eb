//! How a histogram groups objects, as the `histogram` command's `--by` and the MCP server's
//! `histogram` tool's `by` both take it.

use serde::Deserialize;

/// Grouping of histogram rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// One row per class.
    Class,
    /// One row per Java package.
    Package,
    /// One row per class, with all its subclasses included.
    Hierarchy,
}

impl By {
    /// What one row is, as a column's title.
    pub fn row(self) -> &'static str {
        match self {
            By::Class => "class",
            By::Package => "package",
            By::Hierarchy => "class and its subclasses",
        }
    }
}

impl From<By> for analysis::GroupBy {
    fn from(by: By) -> analysis::GroupBy {
        match by {
            By::Class => analysis::GroupBy::Class,
            By::Package => analysis::GroupBy::Package,
            By::Hierarchy => analysis::GroupBy::Hierarchy,
        }
    }
}
