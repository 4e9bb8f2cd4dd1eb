//! One module per subcommand: its arguments and its `run`.

pub mod histogram;
pub mod info;
