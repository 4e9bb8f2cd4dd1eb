//! Integration tests of the `leakscope` binary, one module per area.

mod agent;
mod apps;
mod bad_input;
mod docs;
mod expect;
mod fixture;
mod growth;
mod harm;
mod histogram;
mod instrument;
mod jvm;
mod report;
mod retention;
mod serve;
mod services;
mod stale;
mod support;
mod webdriver;
