//! Integration tests of the `leakscope` binary, one module per area.

mod agent;
// Minutes-long runs: named to start early, beside the rest of the suite, not after it.
mod agent_services;
mod apps;
mod bad_input;
mod docs;
mod evidence;
mod expect;
mod fixture;
mod forked;
mod growth;
mod harm;
mod histogram;
mod instrument;
mod junit;
mod jvm;
mod libraries;
mod mcp;
mod report;
mod retention;
mod serve;
mod share;
mod sql;
mod stale;
mod support;
mod v8;
mod webdriver;
