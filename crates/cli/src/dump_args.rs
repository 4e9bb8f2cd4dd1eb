//! Arguments every command that reads a dump shares: layout overrides and quietness.

use std::path::Path;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::exit::Exit;
use crate::warnings::ReadWarnings;

/// On or off, for layout overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

impl Switch {
    fn get(s: Option<Switch>) -> Option<bool> {
        s.map(|s| s == Switch::On)
    }
}

/// How to read a heap dump.
#[derive(Debug, Clone, Args)]
pub struct DumpArgs {
    /// Force -XX:±UseCompressedOops instead of inferring it from object addresses.
    #[arg(long, value_enum, value_name = "on|off", help_heading = "Object layout (inferred unless set)")]
    pub compressed_oops: Option<Switch>,
    /// Force -XX:±UseCompressedClassPointers.
    #[arg(long, value_enum, value_name = "on|off", help_heading = "Object layout (inferred unless set)")]
    pub compressed_class_pointers: Option<Switch>,
    /// Force -XX:±UseCompactObjectHeaders (JDK 24+).
    #[arg(long, value_enum, value_name = "on|off", help_heading = "Object layout (inferred unless set)")]
    pub compact_headers: Option<Switch>,
    /// Force -XX:ObjectAlignmentInBytes (8, 16, 32, ...).
    #[arg(long, value_name = "BYTES", value_parser = parse_align, help_heading = "Object layout (inferred unless set)")]
    pub object_alignment: Option<u32>,
    /// Which heap dump to read when the file holds several (the old hprof agent appends one per
    /// request), counted from 1, oldest first [default: the last]; `info` lists them.
    #[arg(long = "dump", id = "dump_number", value_name = "N")]
    pub dump_number: Option<usize>,
    /// Where a gzip-compressed dump is unpacked while it is read (it needs its unpacked size
    /// there), and where an index kept out of core puts its files [default: TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<std::path::PathBuf>,
    /// The memory the index may take (such as 8G or 512M): an index estimated to need more
    /// keeps its arrays in temporary files in --tmp-dir and runs slower, but completes; a limit
    /// below the least it needs even so is refused at once, naming that least [default: the
    /// memory available, or the memory cgroup's limit].
    #[arg(long, value_name = "SIZE", value_parser = runstore::options::parse_bytes)]
    pub memory_limit: Option<u64>,
    /// No progress bar and no warnings on stderr (errors are still printed).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The dump, `--json` and reading flags every command that analyses one dump's snapshot
/// takes; each command words `--json`'s help for its own document (`mut_arg`).
#[derive(Debug, Args)]
pub struct OneDump {
    /// The heap dump (.hprof, or gzip of one).
    pub dump: std::path::PathBuf,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub read: DumpArgs,
}

impl OneDump {
    /// The dump's snapshot, its warnings printed, and the progress bar that drew reading it
    /// (for the analyses that follow).
    pub fn snapshot(&self) -> anyhow::Result<(crate::progress::Bar, heap::Snapshot)> {
        let bar = crate::progress::Bar::new(self.read.quiet);
        let snap = app::load_snapshot(&self.dump, &self.read.settings(), &bar)?;
        Ok((bar, snap))
    }

    /// The dump or V8 snapshot read, for the commands that analyse both, and the progress bar
    /// that drew reading it.
    pub fn heap(&self) -> anyhow::Result<(crate::progress::Bar, app::one_dump::OneHeap)> {
        let bar = crate::progress::Bar::new(self.read.quiet);
        let heap = app::one_dump::OneHeap::load(&self.dump, &self.read.settings(), &bar)?;
        Ok((bar, heap))
    }
}

fn parse_align(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (8..=256).contains(&n) && n.is_power_of_two() {
        Ok(n)
    } else {
        Err("object alignment must be a power of two from 8 to 256".into())
    }
}

impl DumpArgs {
    /// The read options these flags ask for.
    pub fn read_options(&self) -> heap::ReadOptions {
        heap::ReadOptions {
            layout: heap::LayoutSpec {
                compressed_oops: Switch::get(self.compressed_oops),
                compressed_class_pointers: Switch::get(self.compressed_class_pointers),
                compact_headers: Switch::get(self.compact_headers),
                align: self.object_alignment,
            },
            dump: self.dump_number,
        }
    }

    /// How dumps are read, for the application layer.
    pub fn settings(&self) -> app::ReadSettings {
        app::ReadSettings { read: self.read_options(), tmp_dir: self.tmp_dir.clone(), memory_limit: self.memory_limit }
    }
}

/// Checks that `path` can be written, before any analysis: an output that cannot be written
/// is an error at once, not after minutes of work. A file that did not exist is not left behind.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// A `--top N` count, where 0 means all, as in every command.
pub fn top_n(n: usize) -> usize {
    if n == 0 {
        usize::MAX
    } else {
        n
    }
}

/// Parses an object id given as `0x7f3a10` (or plain hex).
pub fn parse_id(s: &str) -> Result<u64, String> {
    // DevTools writes a V8 object's id in decimal after an `@`.
    if let Some(decimal) = s.strip_prefix('@') {
        return decimal.parse().map_err(|_| format!("`{s}` is not an id: after @, DevTools' ids are decimal"));
    }
    s.parse::<report::ObjectId>().map(|id| id.0).map_err(|e| e.to_string())
}

/// Parses a duration flag such as `500ms`, `2s`, `10m` or `1h` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    runstore::options::parse_duration(s).ok_or_else(|| format!("`{s}` is not a duration such as 500ms, 2s or 10m"))
}

/// Parses a percentage flag from 0 to 100, such as `1`, `0.5` or `5%`.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("`{s}` is not a percentage between 0 and 100")),
    }
}

/// Parses a `--select` value.
pub fn parse_selector(s: &str) -> Result<analysis::Selector, String> {
    s.parse().map_err(|e: analysis::SelectError| e.to_string())
}

/// Prints a report on stdout: one JSON document with `--json`, else its text form. Every
/// document gets `schema_version` ([`report::SCHEMA_VERSION`]); a command that read dumps
/// passes their warnings (`read`, from the bar that read them), and the document gets them as
/// `warnings` (one line each) and `truncated_at` (the offset where a truncated dump was cut,
/// or null), whatever its shape.
pub fn emit<R: serde::Serialize>(
    json: bool,
    report: &R,
    read: Option<ReadWarnings>,
    text: impl FnOnce(&R) -> String,
) -> anyhow::Result<Exit> {
    if json {
        let mut doc = serde_json::to_value(report)?;
        if let Some(fields) = doc.as_object_mut() {
            fields.insert("schema_version".into(), serde_json::json!(report::SCHEMA_VERSION));
            if let Some(read) = read {
                fields.insert("warnings".into(), serde_json::json!(read.lines));
                fields.insert("truncated_at".into(), serde_json::json!(read.truncated_at));
            }
        }
        outln!("{}", serde_json::to_string(&doc)?)?;
    } else {
        let text = text(report);
        // Every verdict on a dump not read whole says so first, where a reader of the result
        // looks (the warning on stderr is easily lost): a cut dump is not a heap without leaks.
        if let Some(read) = read.filter(|_| !text.contains("INCOMPLETE INPUT: ")) {
            for why in read.incomplete {
                outln!("INCOMPLETE DUMP: {why}: the results below cover only what was read")?;
            }
        }
        out!("{}", text)?;
    }
    Ok(Exit::Success)
}
