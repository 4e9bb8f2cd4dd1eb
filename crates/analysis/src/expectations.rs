//! Objects declared dead with `LeakScope.expectDead` that a heap dump shows still reachable.
//!
//! The API jar keeps one `io.leakscope.LeakScope$Expected` per call: a weak reference to the
//! object with the call site and time. Weak references keep nothing alive and paths never
//! pass through them, so the path found is the one that really keeps the object.

use std::collections::HashMap;

use heap::{ObjIdx, Snapshot, Value};
use report::{ExpectationsReport, ExpectedDead};

use crate::paths::PathFinder;
use crate::retention::Retention;

/// The class of the API's markers.
pub const EXPECTED_CLASS: &str = "io.leakscope.LeakScope$Expected";
/// Characters of a call site read from a marker.
const SITE_CHARS: usize = 500;

/// Reads the markers of `s` and reports every declared-dead object still strongly reachable.
pub fn expectations(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, source: String) -> ExpectationsReport {
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
    reachable.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then_with(|| a.id.cmp(&b.id)));
    ExpectationsReport { source, expectations: markers, collected, unchecked: 0, reachable }
}
