//! One module per subcommand: its arguments and its `run`.

pub mod dominators;
pub mod group;
pub mod histogram;
pub mod info;
pub mod paths;
pub mod retained;
pub mod roots;
pub mod suspects;
