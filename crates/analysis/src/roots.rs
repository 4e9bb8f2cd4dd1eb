//! What each GC root keeps alive: per root kind, per static field, per thread and frame
//! (the Modula-3 tools' ReportReachable).

use std::collections::BTreeMap;

use heap::{ObjIdx, RootDetail, Snapshot};
use report::{FrameRow, RootBytes, RootKindRow, RootsReport, StaticRow, ThreadRow};

use crate::closures::Closures;
use crate::paths::frame_text;
use crate::retention::{strong_closure, Retention};

/// Builds the report; `top` caps the static fields listed (0 = all). Transitive closures are
/// computed only for the rows shown; retained sizes of single objects come from the tree.
pub fn roots_report(s: &Snapshot, r: &Retention, c: &Closures<'_>, top: usize) -> RootsReport {
    let bytes = |group: &[ObjIdx]| RootBytes {
        reachable_bytes: strong_closure(s, group, None).iter().map(|o| s.shallow_bytes(o)).sum(),
        retained_bytes: c.sizes(group).retained_bytes,
    };
    let mut by_kind: BTreeMap<&str, Vec<ObjIdx>> = BTreeMap::new();
    for root in &s.roots {
        by_kind.entry(root.kind.name()).or_default().push(root.object);
    }
    let mut kinds: Vec<RootKindRow> = by_kind
        .into_iter()
        .map(|(kind, mut objs)| {
            let roots = objs.len() as u64;
            objs.sort_unstable();
            objs.dedup();
            RootKindRow { kind: kind.to_owned(), roots, bytes: bytes(&objs) }
        })
        .collect();
    kinds.sort_by(|a, b| b.bytes.retained_bytes.cmp(&a.bytes.retained_bytes).then(a.kind.cmp(&b.kind)));

    let mut statics = s.static_refs();
    statics.sort_by(|a, b| r.retained_bytes(b.2).cmp(&r.retained_bytes(a.2)).then(a.cmp(b)));
    let shown = if top == 0 { statics.len() } else { top.min(statics.len()) };
    let more_statics = (statics.len() - shown) as u64;
    let statics = statics[..shown]
        .iter()
        .map(|&(class, field, target)| {
            let cls = s.classes().get(class);
            StaticRow {
                field: format!("{}.{}", cls.name, cls.statics[field as usize].name),
                class: s.type_label(target),
                id: report::ObjectId(s.address(target)),
                bytes: RootBytes {
                    reachable_bytes: strong_closure(s, &[target], None).iter().map(|o| s.shallow_bytes(o)).sum(),
                    retained_bytes: r.retained_bytes(target),
                },
            }
        })
        .collect();

    let mut threads: Vec<ThreadRow> = s
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut held: Vec<ObjIdx> = t.object.into_iter().collect();
            let mut frames: BTreeMap<u32, Vec<ObjIdx>> = BTreeMap::new();
            for root in &s.roots {
                if let RootDetail::Thread { thread, frame } = root.detail {
                    if thread == i {
                        held.push(root.object);
                        if let Some(d) = frame {
                            frames.entry(d).or_default().push(root.object);
                        }
                    }
                }
            }
            held.sort_unstable();
            held.dedup();
            let frames = frames
                .into_iter()
                .map(|(depth, mut objs)| {
                    objs.sort_unstable();
                    objs.dedup();
                    let method = t.frames.get(depth as usize).map_or_else(|| "?".into(), frame_text);
                    FrameRow { depth, method, objects: objs.len() as u64, bytes: bytes(&objs) }
                })
                .collect();
            ThreadRow {
                serial: t.serial,
                id: t.object.map(|o| report::ObjectId(s.address(o))),
                bytes: bytes(&held),
                frames,
            }
        })
        .collect();
    threads.sort_by(|a, b| b.bytes.retained_bytes.cmp(&a.bytes.retained_bytes).then(a.serial.cmp(&b.serial)));
    RootsReport { live_bytes: r.live_bytes(), kinds, statics, more_statics, threads }
}
