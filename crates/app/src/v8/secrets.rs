//! `secrets` on a V8 snapshot: the credentials in the text of its string objects, each with
//! the object that holds it and the path that keeps it.

use heapsnapshot::{NodeIdx, V8Heap};
use redact::secrets::{self, Confidence};
use rustc_hash::FxHashMap;

use super::paths::entry;
use super::summary::{Names, Trace};
use crate::Reporter;

/// The credentials in `h`'s strings the root reaches, at or above `min`: each text searched
/// once, and reported for every string object that has it.
pub fn secrets(h: &V8Heap, min: Confidence, reporter: &dyn Reporter) -> report::SecretsReport {
    let mut names = Names::new(h);
    let trace = Trace::new(h, &mut names, true, |_, _| {});
    // String objects by their text's index in the table: V8 writes each text once.
    let mut by_text: FxHashMap<u32, Vec<NodeIdx>> = FxHashMap::default();
    for n in h.nodes().filter(|&n| h.node_type(n).is_string() && trace.is_live(n)) {
        by_text.entry(h.name_index(n)).or_default().push(n);
    }
    reporter.start("searching strings for credentials", by_text.len() as u64);
    let mut found = Vec::new();
    let mut below = 0u64;
    for (&text, objects) in &by_text {
        reporter.advance(1);
        let mut t = h.string(text);
        if t.len() > secrets::MAX_TEXT {
            let mut end = secrets::MAX_TEXT;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        for hit in secrets::find(&t) {
            if hit.confidence < min {
                below += objects.len() as u64;
                continue;
            }
            for &o in objects {
                found.push((o, hit.clone(), t.clone()));
            }
        }
    }
    reporter.finish();
    found.sort_by(|a, b| b.1.confidence.cmp(&a.1.confidence).then(a.1.kind.cmp(&b.1.kind)).then(a.0.cmp(&b.0)));
    let findings = found
        .into_iter()
        .map(|(o, hit, text)| {
            let path = entry(h, &trace, o, 1);
            let n = path.steps.len();
            let owner = (n >= 2).then(|| report::SecretOwner {
                id: path.steps[n - 2].id,
                class: path.steps[n - 2].class.clone(),
                field: path.steps[n - 1].field.clone().unwrap_or_default(),
            });
            report::SecretFinding {
                kind: hit.kind.name().into(),
                confidence: hit.confidence.name().into(),
                object: report::ObjectId(h.id(o)),
                class: h.class_name(o).into_owned(),
                encoding: if text.chars().all(|c| (c as u32) < 256) { "latin-1" } else { "utf-16" }.into(),
                owner,
                path: Some(path),
                excerpt: hit.excerpt(&text),
            }
        })
        .collect();
    report::SecretsReport::new(findings, min.name(), below, by_text.len() as u64)
}
