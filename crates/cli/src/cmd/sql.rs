//! `leakscope sql`: SQL over one heap dump or a series of them.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// The arguments of `leakscope sql` (its help text is the `Sql` command's doc in main.rs).
#[derive(Debug, Args)]
#[command(after_help = after_help())]
pub struct SqlArgs {
    /// The heap dumps (.hprof, or gzip of one), then the query.
    #[arg(required = true, value_name = "DUMP... [QUERY]")]
    pub inputs: Vec<String>,
    /// Print one JSON document: {"columns":[{"name","type"}],"rows":[[...]]}.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header line.
    #[arg(long)]
    pub csv: bool,
    /// Show strings' text (objects.text, fields.string); they may hold passwords and personal data.
    #[arg(long)]
    pub show_values: bool,
    #[command(flatten)]
    pub read: DumpArgs,
}

fn after_help() -> String {
    let mut text = String::from("Tables (heap is the dump's number, from 1):\n");
    for t in sql::tables() {
        let names: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
        text.push_str(&wrapped(&format!("{}({}): {}", t.name, names.join(", "), t.doc)));
    }
    text.push_str("\nTable functions (SELECT * FROM dominated(0x7f3a10)):\n");
    for f in sql::FUNCTIONS {
        text.push_str(&wrapped(&format!("{}: {}", f.signature, f.doc)));
    }
    text.push_str("\nIds are written 0x… as every command prints them, in answers and in queries\n  (WHERE id = 0x7f3a10, or quoted after a comparison).\n");
    text.push_str("\nExamples:\n");
    for example in [
        "leakscope sql app.hprof \"SELECT class, count(*), sum(retained_bytes)\n    FROM objects GROUP BY class ORDER BY 3 DESC LIMIT 20\"",
        "leakscope sql app.hprof \"SELECT kind, count(*) FROM roots GROUP BY kind\"",
        "leakscope sql day1.hprof day2.hprof \"SELECT name, heap, instances\n    FROM classes WHERE name LIKE 'com.example.%' ORDER BY name, heap\"",
        "leakscope sql app.hprof --show-values \"SELECT id, text FROM objects\n    WHERE class = 'java.lang.String' AND text LIKE 'jdbc:%'\"",
    ] {
        text.push_str(&format!("  {example}\n"));
    }
    text.push_str("\nWhat each column holds: docs/GUIDE.md, \"Ask the heap in SQL\".");
    text
}

/// `line` as help text: indented by two, wrapped at spaces to 78 columns (clap would wrap
/// it to the terminal, splitting words), continued with an indent of four.
fn wrapped(line: &str) -> String {
    let mut out = String::new();
    let mut current = String::from(" ");
    for word in line.split(' ') {
        if current.chars().count() + 1 + word.chars().count() > 78 {
            out.push_str(&current);
            out.push('\n');
            current = String::from("   ");
        }
        current.push(' ');
        current.push_str(word);
    }
    out.push_str(&current);
    out.push('\n');
    out
}

/// Runs the command.
pub fn run(args: &SqlArgs) -> anyhow::Result<Exit> {
    let (mut dumps, mut query) = (args.inputs.clone(), None);
    if dumps.len() > 1 && !std::path::Path::new(dumps.last().expect("not empty")).is_file() {
        query = dumps.pop();
    }
    let bar = Arc::new(Bar::new(args.read.quiet));
    let paths: Vec<PathBuf> = dumps.iter().map(PathBuf::from).collect();
    let session = app::analyses::sql_session(&paths, &args.read.settings(), args.show_values, bar.clone())?;
    match query {
        Some(q) => answer(args, &session, &bar, &q),
        None if std::io::stdin().is_terminal() => repl(args, &session, &bar),
        None => {
            let mut text = String::new();
            for line in std::io::stdin().lock().lines() {
                text.push_str(&line.context("cannot read the queries from standard input")?);
                text.push('\n');
            }
            for q in statements(&text) {
                answer(args, &session, &bar, q)?;
            }
            Ok(Exit::Success)
        }
    }
}

/// The statements of a script, split at semicolons outside quotes.
fn statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (';', None) => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// Prints the answer to `query`, with the warnings of the dumps read so far (through `bar`:
/// a dump is read when a query first needs it).
fn answer(args: &SqlArgs, session: &sql::Session, bar: &Bar, query: &str) -> anyhow::Result<Exit> {
    let started = std::time::Instant::now();
    let answer = session.query(query)?;
    // For benchmarks (benches/sql-scan.sh), as the phases' timings elsewhere.
    if std::env::var_os("LEAKSCOPE_TIMINGS").is_some() {
        eprintln!("query took {:.3} s, {} rows", started.elapsed().as_secs_f64(), answer.row_count());
    }
    if args.csv {
        out!("{}", answer.to_csv()?)?;
        Ok(Exit::Success)
    } else {
        let doc = answer.to_json()?;
        dump_args::emit(args.json, &doc, bar.read_warnings(), |_| answer.to_text().unwrap_or_default())
    }
}

/// The interactive prompt: one statement per line (or several, separated by semicolons);
/// errors are printed and the prompt goes on.
fn repl(args: &SqlArgs, session: &sql::Session, bar: &Bar) -> anyhow::Result<Exit> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::Editor::<Completer, rustyline::history::DefaultHistory>::new()
        .context("cannot start the interactive prompt")?;
    editor.set_helper(Some(Completer));
    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".leakscope_sql_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    eprintln!("{} heap(s) open; tables: {}. End with Ctrl-D.", session.heaps().len(), table_names().join(", "));
    loop {
        match editor.readline("sql> ") {
            Ok(line) => {
                let _ = editor.add_history_entry(line.as_str());
                for q in statements(&line) {
                    if let Err(e) = answer(args, session, bar, q) {
                        eprintln!("error: {e}");
                    }
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e).context("cannot read from the terminal"),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(Exit::Success)
}

fn table_names() -> Vec<&'static str> {
    sql::tables().into_iter().map(|t| t.name).collect()
}

/// Completes table and column names and SQL keywords at the prompt.
#[derive(rustyline::Helper, rustyline::Highlighter, rustyline::Hinter, rustyline::Validator)]
struct Completer;

/// Words the prompt completes besides table and column names.
const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "JOIN",
    "LEFT JOIN",
    "ON",
    "AND",
    "OR",
    "NOT",
    "LIKE",
    "DESC",
    "ASC",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "DISTINCT",
    "HAVING",
    "IS NULL",
    "IS NOT NULL",
];

impl rustyline::completion::Completer for Completer {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let start = line[..pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let word = &line[start..pos];
        if word.is_empty() {
            return Ok((start, Vec::new()));
        }
        let lower = word.to_lowercase();
        let functions = sql::FUNCTIONS.iter().map(|f| f.signature.split('(').next().unwrap_or_default());
        let mut found: Vec<String> = sql::tables()
            .into_iter()
            .flat_map(|t| std::iter::once(t.name).chain(t.columns.into_iter().map(|c| c.name)))
            .chain(functions)
            .filter(|n| n.starts_with(&lower))
            .map(str::to_owned)
            .collect();
        found.extend(KEYWORDS.iter().filter(|k| k.to_lowercase().starts_with(&lower)).map(|k| k.to_string()));
        found.sort();
        found.dedup();
        Ok((start, found))
    }
}
