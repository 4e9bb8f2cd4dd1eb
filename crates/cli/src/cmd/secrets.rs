//! `leakscope secrets`: the credentials a heap dump still holds.

use clap::{Args, ValueEnum};

use render::Text;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Find credentials in a heap dump's strings, char[] and byte[] (read as UTF-8, else
/// Latin-1), with what holds each one, so that a dump is checked before it leaves production.
///
/// Found: private keys (PEM blocks whose body decodes to a key), JSON Web Tokens (whose
/// header is JSON naming the algorithm), AWS access keys, GitHub and npm tokens (their
/// checksum verified), GitLab, Slack and Stripe tokens and Google API keys (by their
/// documented prefixes), URLs and JDBC URLs with a password, Authorization headers (Basic
/// ones must decode to user:password), card numbers (Luhn's check and the network's prefix
/// and length), and, at low confidence, long random-looking text. Each finding shows its
/// kind, confidence, the object and field that hold it, its shortest path from a GC root,
/// and the match with the secret masked (never the whole secret).
///
/// Exits with 1 when anything at or above --min-confidence is found, 0 when nothing is: a
/// pipeline can refuse to upload a dump that still holds credentials.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope secrets app.hprof
  # what a redacted copy still holds, random-looking text included
  leakscope secrets shared.hprof --min-confidence low
  leakscope secrets app.hprof --json | jq '.findings[] | {kind, owner}'")]
#[command(mut_arg("dump", |a| a.help("The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one")))]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"findings\":[{\"kind\",\"confidence\",\"object\",\"class\",\"encoding\",\"owner\":{\"id\",\"class\",\"field\"},\"path\",\"excerpt\"}],\"min_confidence\",\"below_min_confidence\",\"texts_searched\",\"by_kind\"}.")))]
pub struct SecretsArgs {
    #[command(flatten)]
    pub one: OneDump,
    /// Report findings at this confidence or above: high (a shape that passed its check),
    /// medium (a shape without one, such as a card number), low (random-looking text too).
    #[arg(long, value_enum, default_value = "medium", value_name = "LEVEL")]
    pub min_confidence: Level,
}

/// A confidence level, as `--min-confidence` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Level {
    /// Everything, random-looking text included.
    Low,
    /// Known shapes.
    Medium,
    /// Known shapes that passed their check.
    High,
}

/// Runs the command.
pub fn run(args: &SecretsArgs) -> anyhow::Result<Exit> {
    let min = match args.min_confidence {
        Level::Low => redact::secrets::Confidence::Low,
        Level::Medium => redact::secrets::Confidence::Medium,
        Level::High => redact::secrets::Confidence::High,
    };
    let (bar, report) = if app::v8::is_snapshot(&args.one.dump) {
        let bar = crate::progress::Bar::new(args.one.read.quiet);
        let report = app::share::find_secrets(&args.one.dump, min, &args.one.read.settings(), &bar)?;
        (bar, report)
    } else {
        let (bar, snap) = args.one.snapshot()?;
        let report = app::share::secrets_in(&snap, min, &bar);
        (bar, report)
    };
    let read = bar.read_warnings();
    drop(bar);
    let found = !report.findings.is_empty();
    dump_args::emit(args.one.json, &report, read, |r| r.to_text())?;
    Ok(if found { Exit::CheckFailed } else { Exit::Success })
}
