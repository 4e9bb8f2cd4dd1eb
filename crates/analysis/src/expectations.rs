//! Objects declared dead with `LeakScope.expectDead` that a heap dump shows still reachable.
//!
//! The API jar keeps one `io.leakscope.LeakScope$Expected` per call: a weak reference to the
//! object with the call site and time. Weak references keep nothing alive and paths never
//! pass through them, so the path found is the one that really keeps the object.

use std::collections::HashMap;

use heap::{ObjIdx, Snapshot, Value};
use report::{DeadGroup, ExpectationsReport, ExpectedDead, PathEntry};

use crate::closures::Closures;
use crate::paths::PathFinder;
use crate::retention::Retention;

/// The class of the API's markers.
pub const EXPECTED_CLASS: &str = "io.leakscope.LeakScope$Expected";
/// Characters of a call site read from a marker.
const SITE_CHARS: usize = 500;

/// Reads the markers of `s` and reports every declared-dead object still strongly reachable,
/// each with its path, and grouped by path shape with what each group retains together.
pub fn expectations(
    s: &Snapshot,
    r: &Retention,
    paths: &PathFinder<'_>,
    closures: &Closures<'_>,
    source: String,
) -> ExpectationsReport {
    let marker_classes: Vec<heap::ClassIdx> = s.classes().find_all(EXPECTED_CLASS).collect();
    // Declared-dead objects, the earliest declaration of each.
    let mut declared: HashMap<Option<ObjIdx>, Vec<(u64, String)>> = HashMap::new();
    let mut markers = 0u64;
    for m in s.objects().filter(|&o| marker_classes.contains(&s.class_of(o)) && s.mirror_class(o).is_none()) {
        markers += 1;
        let target = s.field_object(m, "referent");
        let site = s.field_object(m, "site").and_then(|t| s.string_value(t, SITE_CHARS)).unwrap_or_default();
        let at = match s.field(m, "atMillis") {
            Some(Value::Primitive(_, bits)) => bits,
            _ => 0,
        };
        declared.entry(target).or_default().push((at, site));
    }
    let now = s.census.header.timestamp_ms;
    let mut reachable = Vec::new();
    let mut collected = declared.get(&None).map_or(0, |v| v.len() as u64);
    for (target, mut calls) in declared.into_iter().filter_map(|(t, c)| Some((t?, c))) {
        calls.sort();
        if !r.is_live(target) {
            collected += calls.len() as u64;
            continue;
        }
        let (at, site) = calls.swap_remove(0);
        let id = report::ObjectId(s.address(target));
        reachable.push(ExpectedDead {
            class: s.type_label(target),
            site,
            declared_ms_ago: now.saturating_sub(at),
            path: paths.report(format!("id:{id}"), &[target], 1).paths.into_iter().next(),
            id: Some(id),
            retained_bytes: Some(r.retained_bytes(target)),
            held_by: Vec::new(),
        });
    }
    let groups = dead_groups(
        &reachable,
        |x| x.id.and_then(|id| s.find(id.0)).and_then(|o| paths.shape_of(o)),
        |members| {
            let group: Vec<ObjIdx> =
                members.iter().filter_map(|&i| reachable[i].id.and_then(|id| s.find(id.0))).collect();
            // The members share one path shape: the first one's path stands for them all.
            let path = group.first().and_then(|&o| paths.path(o)).map(|p| {
                PathEntry::new(p.root.to_report(), crate::paths::report_steps(s, &p.steps), group.len() as u64)
            });
            (Some(closures.sizes(&group).retained_bytes), path)
        },
    );
    reachable.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then_with(|| a.id.cmp(&b.id)));
    ExpectationsReport { source, expectations: markers, collected, unchecked: 0, groups, reachable }
}

/// Groups `reachable` by `key` (members' indices, in order), one [`DeadGroup`] each with
/// `sizes(members)` giving the retained bytes and path of the group; most objects first.
pub fn dead_groups<K: Eq + std::hash::Hash>(
    reachable: &[ExpectedDead],
    key: impl Fn(&ExpectedDead) -> K,
    mut sizes: impl FnMut(&[usize]) -> (Option<u64>, Option<PathEntry>),
) -> Vec<DeadGroup> {
    let mut index: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, x) in reachable.iter().enumerate() {
        let g = *index.entry(key(x)).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[g].push(i);
    }
    let mut groups: Vec<DeadGroup> = members
        .iter()
        .map(|m| {
            let xs: Vec<&ExpectedDead> = m.iter().map(|&i| &reachable[i]).collect();
            let mut sites: Vec<&str> = xs.iter().map(|x| x.site.as_str()).collect();
            sites.sort_unstable();
            let mut by_site: Vec<(usize, &str)> = sites.chunk_by(|a, b| a == b).map(|c| (c.len(), c[0])).collect();
            by_site.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            let (retained_bytes, path) = sizes(m);
            DeadGroup {
                class: xs[0].class.clone(),
                count: xs.len() as u64,
                site: by_site[0].1.to_owned(),
                other_sites: by_site.iter().skip(1).take(4).map(|s| s.1.to_owned()).collect(),
                sites: by_site.len() as u64,
                oldest_ms_ago: xs.iter().map(|x| x.declared_ms_ago).max().unwrap_or(0),
                newest_ms_ago: xs.iter().map(|x| x.declared_ms_ago).min().unwrap_or(0),
                retained_bytes,
                path,
                held_by: xs[0].held_by.clone(),
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        b.count.cmp(&a.count).then(b.retained_bytes.cmp(&a.retained_bytes)).then(a.class.cmp(&b.class))
    });
    groups
}
