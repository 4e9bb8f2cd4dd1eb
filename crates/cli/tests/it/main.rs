//! Integration tests of the `leakscope` binary, one module per area.

mod bad_input;
mod histogram;
mod jvm;
mod support;
