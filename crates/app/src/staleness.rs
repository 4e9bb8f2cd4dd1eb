//! Staleness (`--watch`): the watched objects still alive, grouped by their path from a root,
//! with how long ago each was last used.

use std::collections::BTreeMap;
use std::path::Path;

use crate::{Error, Result};

/// The staleness report of a run store recorded with `--watch`: ages are taken at the run's
/// end, or at `now_ms` while it runs; objects used less than `older_than_ms` ago are left out.
pub fn of_store(path: &Path, older_than_ms: u64, now_ms: u64) -> Result<report::StaleReport> {
    let run = runstore::read(path, 1)?;
    let options = run.meta.get("options").map(String::as_str).unwrap_or("");
    let rules = runstore::Options::parse(options, 0).map(|o| o.watch).unwrap_or_default();
    if rules.is_empty() {
        return Err(Error::Usage(format!(
            "{} was not recorded with --watch: nothing was watched (leakscope run --watch 'rule:A>B>C' ...)",
            path.display()
        )));
    }
    let ended = run.meta.get("ended_ms").and_then(|t| t.parse::<u64>().ok());
    Ok(stale_report(&run, &rules, path.display().to_string(), ended.unwrap_or(now_ms), older_than_ms))
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
    let mut fields_of: BTreeMap<Vec<String>, runstore::FieldsSeen> = BTreeMap::new();
    let mut unmatched = 0;
    let mut not_followed = 0;
    let mut never_used = 0;
    for w in run.watched.iter().filter(|w| !w.freed) {
        let mut path: Vec<String> = w.holders.iter().rev().cloned().collect();
        path.push(w.class.clone());
        if !rules.iter().any(|r| heap::names::rule_matches_path(r, &path)) {
            // A path no walk has followed to a root yet may still match when it has.
            if w.holders.last().is_none_or(|h| h == "…") {
                not_followed += 1;
            } else {
                unmatched += 1;
            }
            continue;
        }
        // A hash bucket's chain (`HashMap$Node > HashMap$Node`) or a linked list's run of
        // nodes is one step of the structure: one map's entries are one path, whatever
        // their depth in a chain; the step's field is the innermost node's (`value`, not `next`).
        let mut fields = w.fields.clone();
        fields.resize(w.holders.len(), String::new());
        fields.reverse();
        fields.push(String::new());
        let (path, fields) = one_step_per_run(path, fields);
        let age = at_ms.saturating_sub(w.last_ms.unwrap_or(w.tagged_ms));
        if age < older_than_ms {
            continue;
        }
        never_used += u64::from(w.last_ms.is_none());
        fields_of.entry(path.clone()).or_default().add(&fields);
        groups.entry(path).or_default().push((age, w.location.clone()));
    }
    let mut paths: Vec<report::StalePath> = groups
        .into_iter()
        .map(|(path, mut objects)| {
            objects.sort_by_key(|o| std::cmp::Reverse(o.0));
            let ages: Vec<u64> = objects.iter().map(|o| o.0).collect();
            let fields = fields_of.remove(&path).unwrap_or_default().merged(path.len());
            report::StalePath {
                path,
                fields,
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
        not_followed,
        notes,
    }
}

/// `path` (classes from the root) with each run of one class made one step, and `fields`
/// (entry for entry) with the run's last field: the one that leads on to the next class.
fn one_step_per_run(path: Vec<String>, fields: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut steps: Vec<String> = Vec::with_capacity(path.len());
    let mut along: Vec<String> = Vec::with_capacity(path.len());
    for (class, field) in path.into_iter().zip(fields) {
        if steps.last() == Some(&class) {
            *along.last_mut().expect("a field per step") = field;
        } else {
            steps.push(class);
            along.push(field);
        }
    }
    (steps, along)
}
