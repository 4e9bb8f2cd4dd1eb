//! `leakscope stale`: which watched objects are still held but no longer used.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;
use clap::Args;

use crate::exit::Exit;
use crate::heap_series;

/// The two-phase detector's report (Table 5.1) for a run recorded with `--watch`: per
/// reference path from a GC root to the watched objects, how many there are and how long ago
/// they were last used (longest, median, most recent), with where the stalest one was last
/// used. The path unused the longest comes first: a leak is a path whose objects are held but
/// never used again.
///
/// An object counts as used when one of its class's instance methods is entered (the agent
/// instruments them); reading its fields directly from other classes does not count. Paths are
/// learned by the agent's heap walks one level per walk (`…` marks the part not followed
/// yet); an object not used since it was first watched is aged from that moment.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope run --watch 'rule:SessionRegistry>Session' --out run.db \\
      -- java -jar app.jar
  leakscope stale run.db
  # a JVM recording with --watch
  leakscope stale 12345 --older-than 10m --json")]
pub struct StaleArgs {
    /// A run store written with --watch, or the process id of a JVM recording one.
    pub target: String,
    /// Count only objects unused for at least this long (30s, 10m, 2h).
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,
    /// Print one JSON document: {"source","rules","at_ms","older_than_ms","paths":[{"path","count","last_access":{"longest_ms","median_ms","most_recent_ms"},"location"}],"unmatched","notes"}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &StaleArgs) -> anyhow::Result<Exit> {
    let older_than = match &args.older_than {
        Some(d) => runstore::options::parse_duration(d)
            .ok_or_else(|| anyhow::anyhow!("--older-than {d:?} is not a duration such as 30s, 10m or 2h"))?,
        None => std::time::Duration::ZERO,
    };
    let path = crate::cmd::top::store_of(&args.target)?;
    let run = heap_series::read_run(&path, 1)?;
    let options = run.meta.get("options").map(String::as_str).unwrap_or("");
    let rules = runstore::options::Options::parse(options, 0).map(|o| o.watch).unwrap_or_default();
    if rules.is_empty() {
        bail!(
            "{} was not recorded with --watch: nothing was watched (leakscope run --watch 'rule:A>B>C' ...)",
            path.display()
        );
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let ended = run.meta.get("ended_ms").and_then(|t| t.parse::<u64>().ok());
    let report =
        stale_report(&run, &rules, path.display().to_string(), ended.unwrap_or(now), older_than.as_millis() as u64);
    crate::dump_args::emit(args.json, &report, |r| r.to_text())
}

/// The report over the watched objects of `run` still alive, ages taken before `at_ms`.
pub fn stale_report(
    run: &runstore::Run,
    rules: &[Vec<String>],
    source: String,
    at_ms: u64,
    older_than_ms: u64,
) -> report::StaleReport {
    let mut groups: BTreeMap<Vec<String>, Vec<(u64, Option<String>)>> = BTreeMap::new();
    let mut unmatched = 0;
    let mut never_used = 0;
    for w in run.watched.iter().filter(|w| !w.freed) {
        let mut path: Vec<String> = w.holders.iter().rev().cloned().collect();
        path.push(w.class.clone());
        if !rules.iter().any(|r| heap::names::rule_matches_path(r, &path)) {
            unmatched += 1;
            continue;
        }
        let age = at_ms.saturating_sub(w.last_ms.unwrap_or(w.tagged_ms));
        if age < older_than_ms {
            continue;
        }
        never_used += u64::from(w.last_ms.is_none());
        groups.entry(path).or_default().push((age, w.location.clone()));
    }
    let mut paths: Vec<report::StalePath> = groups
        .into_iter()
        .map(|(path, mut objects)| {
            objects.sort_by_key(|o| std::cmp::Reverse(o.0));
            let ages: Vec<u64> = objects.iter().map(|o| o.0).collect();
            report::StalePath {
                path,
                count: ages.len() as u64,
                last_access: report::LastAccessAges {
                    longest_ms: ages[0],
                    median_ms: ages[ages.len() / 2],
                    most_recent_ms: ages[ages.len() - 1],
                },
                location: objects.swap_remove(0).1,
            }
        })
        .collect();
    paths.sort_by(|a, b| b.last_access.longest_ms.cmp(&a.last_access.longest_ms).then(b.count.cmp(&a.count)));
    let mut notes = Vec::new();
    if never_used > 0 {
        notes.push(format!(
            "{never_used} objects were not used since they were first watched: their ages count from then"
        ));
    }
    if paths.iter().any(|p| p.path.first().is_some_and(|h| h == "…")) {
        notes.push("paths starting with … are still being followed: each heap walk learns one more holder".into());
    }
    if run.watched.is_empty() {
        notes.push("no watched object yet: objects are watched when first used or reached by a heap walk".into());
    }
    report::StaleReport {
        source,
        rules: rules.iter().map(|r| format!("rule:{}", r.join(">"))).collect(),
        at_ms,
        older_than_ms,
        paths,
        unmatched,
        notes,
    }
}
