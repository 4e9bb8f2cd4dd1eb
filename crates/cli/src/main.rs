//! `leakscope`: the command-line front end. Each command parses its arguments, makes one
//! call into the `app` library (or an analysis), prints the result (`render` for people,
//! JSON with `--json`), draws progress, and maps outcomes to exit codes (see [`exit::Exit`]).

/// `print!` to stdout that returns the write's error instead of panicking, so that a closed
/// pipe (`leakscope ... | head -1`) ends the command quietly (see [`is_broken_pipe`]).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)
    }};
}

/// `println!` to stdout that returns the write's error instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
    }};
}

mod by;
mod cmd;
mod dump_args;
mod exit;
mod progress;
mod series_args;
mod warnings;

use clap::{Parser, Subcommand};
use exit::Exit;

/// Find the data structure that leaks in a JVM heap.
///
/// leakscope reads HPROF heap dumps (`jcmd PID GC.heap_dump FILE`) and tells what fills the
/// heap; its JVMTI agent (`run`, `attach`) watches a running JVM for a growing data structure. Results go to stdout (`--json` for one JSON document); progress and warnings go to
/// stderr. Exit codes: 0 success, 1 a requested check failed, 2 error.
#[derive(Debug, Parser)]
#[command(name = "leakscope", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Instances and JVM shallow bytes per class, package or type hierarchy.
    Histogram(cmd::histogram::HistogramArgs),
    /// Summary of a dump: layout, objects, references, roots, reachable vs. unreachable.
    Info(cmd::info::InfoArgs),
    /// The dominator tree: which objects keep the most memory alive, and what they dominate.
    Dominators(cmd::dominators::DominatorsArgs),
    /// Shallow, transitive and retained bytes of groups of objects, alone and together.
    Retained(cmd::retained::RetainedArgs),
    /// Why objects are alive: shortest paths from GC roots, merged by shape.
    Paths(cmd::paths::PathsArgs),
    /// One object looked into: its fields and values, array elements, referrers, dominator, sizes.
    Object(cmd::object::ObjectArgs),
    /// Bytes reachable from and retained by each root kind, static field, thread and frame.
    Roots(cmd::roots::RootsArgs),
    /// Objects grouped by class, package, loader or GC root, level by level, with deep and retained bytes.
    Group(cmd::group::GroupArgs),
    /// Leak suspects: where the memory accumulates, what holds it, and what it holds.
    Suspects(cmd::suspects::SuspectsArgs),
    /// Which data structure keeps growing over a series of heaps, and what holds it.
    Growth(cmd::growth::GrowthArgs),
    /// One self-contained HTML page about a leak: growth charts, slice diagrams, suspects, dominators.
    Report(cmd::report::ReportArgs),
    /// The report as a local web UI on 127.0.0.1: expandable dominator and grouping trees, paths, search.
    Serve(cmd::serve::ServeArgs),
    /// Whether the objects a program declared dead (LeakScope.expectDead) are really gone, and what keeps them.
    Check(cmd::check::CheckArgs),
    /// Watched objects still held but unused, per reference path, oldest first (run --watch).
    Stale(cmd::stale::StaleArgs),
    /// Write leakscope-api.jar, whose LeakScope.expectDead(o) declares that an object should be garbage.
    ApiJar(cmd::api_jar::ApiJarArgs),
    /// Ask the heap anything in SQL: objects, classes, references, roots and fields as tables.
    ///
    /// The dumps are read once; each query runs on tables built from them. Every table's first
    /// column, heap, is the number of the dump a row comes from (1 for the first given), so one
    /// query compares a series. Columns that need the dominator tree (retained_bytes,
    /// dominator, reachable) or root distances (depth) are computed only when a query reads
    /// them. The last argument is the query when it is not a file; without one, queries are
    /// read from standard input (separated by semicolons), or on a terminal at a prompt with
    /// history and completion of table and column names.
    Sql(cmd::sql::SqlArgs),
    /// Serve these tools to an AI assistant, over the Model Context Protocol on stdio.
    ///
    /// For an assistant that starts it as a subprocess (Claude Desktop, VS Code, ...). Its tools
    /// open heap dumps, series of dumps and run stores, and answer: info, histogram, suspects,
    /// dominators, paths, retained, growth, diff, stale, check and sql. Dumps are read once and
    /// kept, with their dominator trees, while the server runs. Read-only: no tool writes a file
    /// or touches a running JVM; strings' text only with --show-values.
    Mcp(cmd::mcp::McpArgs),
    /// A copy of a dump that can be shared: values masked (equal ones stay equal), analyses unchanged.
    Redact(cmd::redact::RedactArgs),
    /// Credentials a dump still holds (keys, tokens, passwords, card numbers), and what holds them.
    Secrets(cmd::secrets::SecretsArgs),
    /// Per-class and per-reference changes between two heaps.
    Diff(cmd::diff::DiffArgs),
    /// Save a heap's class points-from graph and path tree (about 1 MB) to compare heaps without keeping dumps.
    Summary(cmd::summary::SummaryArgs),
    /// Start a Java program with the leakscope agent, recording its run to a run store.
    Run(cmd::run::RunArgs),
    /// Load the leakscope agent into a running JVM.
    Attach(cmd::run::AttachArgs),
    /// List running JVMs: pid, command, uptime, heap in use, agent.
    Jvms(cmd::jvms::JvmsArgs),
    /// Live view of a JVM with the agent: live and allocated bytes per class, growing classes.
    Top(cmd::top::TopArgs),
}

fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        // A value a flag's parser refused is said in one line (clap adds a pointer to --help);
        // other usage errors keep clap's usage lines, which say what is missing.
        Err(e)
            if matches!(e.kind(), clap::error::ErrorKind::ValueValidation | clap::error::ErrorKind::InvalidValue) =>
        {
            let text = e.render().to_string();
            eprintln!("{}", text.lines().next().unwrap_or_default());
            return Exit::Error.into();
        }
        Err(e) => {
            let code = if e.use_stderr() { Exit::Error } else { Exit::Success };
            let _ = e.print();
            return code.into();
        }
    };
    quiet_about_temp_files();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&cli.command)));
    let result = match run {
        Ok(result) => result,
        Err(payload) => match payload.downcast::<graph::TempFileFailed>() {
            Ok(failed) => {
                eprintln!("error: {failed}; free some space there, or give --tmp-dir a directory that has room");
                return Exit::Error.into();
            }
            Err(other) => std::panic::resume_unwind(other),
        },
    };
    match result {
        Ok(code) => code.into(),
        // The reader went away (`| head`): what it wanted was written, so this is success.
        Err(e) if is_broken_pipe(&e) => Exit::Success.into(),
        Err(e) => {
            eprintln!("error: {}", chain(&e));
            Exit::Error.into()
        }
    }
}

/// Leaves the message about a temporary file that failed ([`graph::TempFileFailed`], raised
/// where an index spills to disk) to `main`, which prints it as an error; other panics are
/// reported as usual.
fn quiet_about_temp_files() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<graph::TempFileFailed>().is_none() {
            report(info);
        }
    }));
}

/// Runs the command.
fn dispatch(command: &Command) -> anyhow::Result<Exit> {
    match command {
        Command::Histogram(a) => cmd::histogram::run(a),
        Command::Info(a) => cmd::info::run(a),
        Command::Dominators(a) => cmd::dominators::run(a),
        Command::Sql(a) => cmd::sql::run(a),
        Command::Mcp(a) => cmd::mcp::run(a),
        Command::Retained(a) => cmd::retained::run(a),
        Command::Paths(a) => cmd::paths::run(a),
        Command::Object(a) => cmd::object::run(a),
        Command::Roots(a) => cmd::roots::run(a),
        Command::Group(a) => cmd::group::run(a),
        Command::Suspects(a) => cmd::suspects::run(a),
        Command::Growth(a) => cmd::growth::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Stale(a) => cmd::stale::run(a),
        Command::ApiJar(a) => cmd::api_jar::run(a),
        Command::Redact(a) => cmd::redact::run(a),
        Command::Secrets(a) => cmd::secrets::run(a),
        Command::Diff(a) => cmd::diff::run(a),
        Command::Summary(a) => cmd::summary::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Attach(a) => cmd::run::attach(a),
        Command::Jvms(a) => cmd::jvms::run(a),
        Command::Top(a) => cmd::top::run(a),
    }
}

/// Whether the error comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// The error and its causes on one line, without repeating a cause already in the message.
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !out.contains(&s) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn examples_fit_an_80_column_terminal_so_none_is_split() {
        // clap wraps help to the terminal; a wrapped example splits a selector or turns a
        // comment into what looks like a command.
        fn check(cmd: &clap::Command, path: &str) {
            if let Some(after) = cmd.get_after_help() {
                for line in after.to_string().lines() {
                    assert!(line.chars().count() <= 78, "`{path} --help`: {line:?} is too wide");
                }
            }
            for sub in cmd.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        check(&Cli::command(), "leakscope");
    }

    #[test]
    fn help_says_what_options_do_not_which_paper_they_come_from() {
        // The papers are cited in docs/papers.md; a user reading --help needs what an option
        // does and its unit, not a figure number or a constant's name.
        const JARGON: [&str; 12] = [
            "Figure",
            "MAX_LEAK",
            "Shownew",
            "thesis",
            "AntTracks",
            "Modula",
            "Semi-NCA",
            "Table 5",
            "ReportReachable",
            "RTHeapDebug",
            "Cork's",
            "two-phase",
        ];
        fn check(cmd: &mut clap::Command, path: &str) {
            let help = cmd.render_long_help().to_string();
            for word in JARGON {
                assert!(!help.contains(word), "`{path} --help` says {word:?}:\n{help}");
            }
            for sub in cmd.get_subcommands_mut() {
                let name = format!("{path} {}", sub.get_name());
                check(sub, &name);
            }
        }
        check(&mut Cli::command(), "leakscope");
    }
}
