//! One module per subcommand: its arguments and its `run`.

pub mod api_jar;
pub mod check;
pub mod diff;
pub mod dominators;
pub mod group;
pub mod growth;
pub mod histogram;
pub mod info;
pub mod jvms;
pub mod mcp;
pub mod object;
pub mod paths;
pub mod redact;
pub mod report;
pub mod retained;
pub mod roots;
pub mod run;
pub mod secrets;
pub mod serve;
pub mod sql;
pub mod stale;
pub mod summary;
pub mod suspects;
pub mod top;
