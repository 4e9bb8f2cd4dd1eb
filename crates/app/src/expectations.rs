//! Objects the program declared dead (`LeakScope.expectDead`): which are still reachable, in
//! a dump (with their paths and retained sizes) or as of an agent's last heap walk.

use std::path::Path;

use crate::inputs::InputKind;
use crate::{load_snapshot, Error, ReadSettings, Reporter, Result};

/// The expectations in a file: a heap dump (as [`of_dump`]) or a run store (as [`of_run`]);
/// a summary has no objects to check.
pub fn of_file(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<report::ExpectationsReport> {
    match crate::inputs::kind(path)? {
        InputKind::RunStore => {
            let run = runstore::read(path, 1)?;
            no_walk_yet(&run, path)?;
            Ok(of_run(&run, &path.display().to_string()))
        }
        InputKind::Dump => of_dump(path, settings, reporter),
        InputKind::Summary => Err(Error::Usage(format!(
            "{} is a summary: it has no objects; give a heap dump or a run store",
            path.display()
        ))),
    }
}

/// A store whose agent has not walked the heap yet cannot say what was declared dead: the
/// agent records declarations and checks them at its heap walks, so "none declared" would be
/// a guess (300 declarations read as none five seconds into a run, and as reachable at 45 s).
fn no_walk_yet(run: &runstore::Run, path: &Path) -> Result<()> {
    if run.walks.is_empty() && run.expectations.is_empty() {
        return Err(Error::Usage(format!(
            "{}: the agent has not walked the heap yet, and it records and checks the objects declared dead at its heap walks; check again after its first walk, or check the process id to dump the JVM now",
            path.display()
        )));
    }
    Ok(())
}

/// The expectations recorded in a dump written by a JVM that ran the agent.
pub fn of_dump(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<report::ExpectationsReport> {
    let snap = load_snapshot(path, settings, reporter)?;
    let retention = analysis::Retention::build(&snap, reporter);
    let paths = analysis::PathFinder::new(&snap, reporter);
    let closures = analysis::Closures::new(&snap, reporter);
    Ok(analysis::expectations(&snap, &retention, &paths, &closures, path.display().to_string()))
}

/// What a run store says of the declared-dead objects: reachable at the agent's last walk,
/// with what referenced them; oldest declaration first.
pub fn of_run(run: &runstore::Run, source: &str) -> report::ExpectationsReport {
    let mut collected = 0;
    let mut unchecked = 0;
    let mut reachable = Vec::new();
    for x in &run.expectations {
        match x.checked_ms {
            _ if x.freed => collected += 1,
            Some(t) if t >= x.at_ms && x.reached => reachable.push(report::ExpectedDead {
                class: x.class.clone(),
                site: x.site.clone(),
                declared_ms_ago: t - x.at_ms,
                id: None,
                retained_bytes: None,
                path: None,
                held_by: x.held_by.clone(),
            }),
            Some(t) if t >= x.at_ms => collected += 1,
            _ => unchecked += 1,
        }
    }
    reachable.sort_by_key(|x| std::cmp::Reverse(x.declared_ms_ago));
    let groups = analysis::dead_groups(&reachable, |x| (x.class.clone(), x.held_by.clone()), |_| (None, None));
    report::ExpectationsReport {
        source: source.to_string(),
        expectations: run.expectations.len() as u64,
        collected,
        unchecked,
        groups,
        reachable,
    }
}
