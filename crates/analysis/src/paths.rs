//! Shortest paths from GC roots (Modula-3's "why is this object still alive?", MAT's
//! paths to GC roots excluding weak references), merged when many objects share a shape.

use std::collections::HashMap;

use graph::{Ints, Progress};
use heap::{ClassKind, ObjIdx, RefStrength, RootDetail, Snapshot};

use crate::retention::{path_starts, strong_bfs, Reached};

/// Where a path starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RootInfo {
    /// Root kind (`java frame`, `system class`, `jni global`, `class held by the VM`, ...).
    pub kind: String,
    /// Thread, frame, class or reference details.
    pub detail: String,
    /// The root in plain words ([`report::PathRoot::label`]).
    pub label: String,
}

impl RootInfo {
    /// As the reports show it.
    pub fn to_report(&self) -> report::PathRoot {
        report::PathRoot { kind: self.kind.clone(), detail: self.detail.clone(), label: self.label.clone() }
    }
}

/// The reports' steps of a path, with a class loader's bookkeeping between the loader and a
/// class it defines (`loader.classes`, then that list's array) marked folded.
pub fn report_steps(s: &Snapshot, steps: &[Step]) -> Vec<report::PathStep> {
    let mut out: Vec<report::PathStep> = steps
        .iter()
        .map(|st| report::PathStep {
            id: report::ObjectId(s.address(st.object)),
            class: s.type_label(st.object),
            field: st.field.clone(),
            folded: false,
        })
        .collect();
    for i in 3..steps.len() {
        let Some(class) = s.mirror_class(steps[i].object) else { continue };
        let loader = s.classes().get(class).loader_id;
        let field = |j: usize| steps[j].field.as_deref();
        if loader != 0
            && s.address(steps[i - 3].object) == loader
            && field(i - 2) == Some("classes")
            && field(i - 1) == Some("elementData")
        {
            out[i - 2].folded = true;
            out[i - 1].folded = true;
        }
    }
    out
}

/// One object on a path, with the field of the previous object that references it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The object.
    pub object: ObjIdx,
    /// The field (`next`, `[12]`, `static cache`) of the previous step; `None` for the root object.
    pub field: Option<String>,
}

/// A path from a GC root to an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootPath {
    /// The root.
    pub root: RootInfo,
    /// Root object first, the target last.
    pub steps: Vec<Step>,
}

/// Paths shared by many objects: one example and how many objects have that shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedPath {
    /// An example path (the first object met with this shape).
    pub example: RootPath,
    /// Objects whose shortest path has the same root, classes and fields (array indices and
    /// repeated steps through one class aside).
    pub count: u64,
}

/// Breadth-first parents from the roots over strong references, computed once.
pub struct PathFinder<'a> {
    snap: &'a Snapshot,
    /// BFS parent per object: `NONE` unseen, `ROOT` a root object, else the parent's index
    /// plus 2.
    parent: Ints,
    roots: HashMap<ObjIdx, RootInfo>,
}

const NONE: u64 = 0;
const ROOT: u64 = 1;

impl<'a> PathFinder<'a> {
    /// Runs the breadth-first search.
    pub fn new(snap: &'a Snapshot, progress: &dyn Progress) -> PathFinder<'a> {
        let n = snap.object_count() as usize;
        let mut parent = Ints::zeros(n, n as u64 + 1);
        let (starts, first) = path_starts(snap);
        let claim = |o: ObjIdx, how: Reached| {
            let fresh = parent.get(o.index()) == NONE;
            if fresh {
                parent.set(o.index(), if let Reached::From(p) = how { p.0 + 2 } else { ROOT });
            }
            fresh
        };
        strong_bfs(snap, &starts, first, claim, progress);
        PathFinder { snap, parent, roots: root_infos(snap, &starts) }
    }

    /// The shortest strong path from a GC root to `o`, if one exists.
    pub fn path(&self, o: ObjIdx) -> Option<RootPath> {
        let chain = self.chain(o)?;
        let mut steps = Vec::with_capacity(chain.len());
        for (i, &obj) in chain.iter().enumerate() {
            let field = (i > 0).then(|| self.field_name(chain[i - 1], obj, false));
            steps.push(Step { object: obj, field });
        }
        Some(RootPath { root: self.roots.get(&chain[0]).cloned().unwrap_or_else(unknown_root), steps })
    }

    /// The shape of `o`'s shortest path: its root, classes and fields, array indices and
    /// repeated steps through one class aside; `None` when no strong path reaches `o`.
    pub fn shape_of(&self, o: ObjIdx) -> Option<String> {
        self.chain(o).map(|chain| self.shape(&chain))
    }

    /// Shortest paths of many objects, merged by shape, most common first; at most `max` shapes.
    pub fn merged(&self, objects: &[ObjIdx], max: usize) -> (Vec<MergedPath>, u64) {
        let mut shapes: HashMap<String, (u64, ObjIdx)> = HashMap::new();
        let mut order = Vec::new();
        let mut unreachable = 0;
        for &o in objects {
            let Some(key) = self.shape_of(o) else {
                unreachable += 1;
                continue;
            };
            let e = shapes.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                (0, o)
            });
            e.0 += 1;
        }
        let mut merged: Vec<(u64, usize, ObjIdx)> =
            order.iter().enumerate().map(|(i, k)| (shapes[k].0, i, shapes[k].1)).collect();
        merged.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        merged.truncate(max);
        let out =
            merged.into_iter().filter_map(|(count, _, o)| Some(MergedPath { example: self.path(o)?, count })).collect();
        (out, unreachable)
    }

    /// The `paths` report for `objects` (chosen by `selector`): at most `max` path shapes.
    pub fn report(&self, selector: String, objects: &[ObjIdx], max: usize) -> report::PathsReport {
        let s = self.snap;
        let max = max.max(1);
        let (merged, unreachable) = self.merged(objects, max + 1);
        let more_shapes = merged.len() > max;
        let paths = merged
            .into_iter()
            .take(max)
            .map(|m| report::PathEntry::new(m.example.root.to_report(), report_steps(s, &m.example.steps), m.count))
            .collect();
        report::PathsReport { selector, selected: objects.len() as u64, paths, unreachable, more_shapes }
    }

    /// The objects of `o`'s shortest path, from the root object to `o`.
    pub(crate) fn chain(&self, o: ObjIdx) -> Option<Vec<ObjIdx>> {
        let mut chain = vec![o];
        let mut cur = o;
        loop {
            match self.parent.get(cur.index()) {
                NONE => return None,
                ROOT => break,
                p => {
                    cur = ObjIdx(p - 2);
                    chain.push(cur);
                }
            }
        }
        chain.reverse();
        Some(chain)
    }

    /// The path's root, classes and fields. Array indices, and further steps through the
    /// same class (a hash bucket's `next`, `next`, ..., a tree's `left`, `right`, ...), do
    /// not make a new shape.
    fn shape(&self, chain: &[ObjIdx]) -> String {
        let s = self.snap;
        let mut key = format!("{:?}", self.roots.get(&chain[0]));
        let mut prev_class = None;
        for (i, &o) in chain.iter().enumerate() {
            let class = s.class_of(o);
            if prev_class == Some(class) {
                continue;
            }
            prev_class = Some(class);
            if i > 0 {
                key.push_str(&self.field_name(chain[i - 1], o, true));
            }
            key.push('>');
            key.push_str(&s.classes().get(class).name);
            key.push('|');
        }
        key
    }

    /// The field of `from` that references `to`; arrays give `[i]`, or `[]` when `any_index`.
    fn field_name(&self, from: ObjIdx, to: ObjIdx, any_index: bool) -> String {
        let s = self.snap;
        if any_index
            && s.classes().get(s.class_of(from)).kind == ClassKind::ObjectArray
            && s.mirror_class(from).is_none()
        {
            return "[]".into();
        }
        s.labeled_edges(from)
            .into_iter()
            .find(|(_, e)| e.target == to && e.strength == RefStrength::Strong)
            .map_or_else(|| "?".into(), |(label, _)| s.label_name(from, label))
    }
}

/// The kind of the class mirrors the VM holds that no root record names: a path's root kind,
/// and a row of `roots`.
pub const VM_HELD_CLASS: &str = "class held by the VM";

fn unknown_root() -> RootInfo {
    RootInfo { kind: "unknown".into(), detail: String::new(), label: "unknown root".into() }
}

/// Describes the root of each start object: the first root record naming it, or a class the VM holds.
fn root_infos(s: &Snapshot, starts: &[ObjIdx]) -> HashMap<ObjIdx, RootInfo> {
    let mut out = HashMap::new();
    // An object both a static and a running frame hold is named by the lasting root.
    let (lasting, frames): (Vec<&heap::Root>, Vec<&heap::Root>) = s.roots.iter().partition(|r| !r.kind.held_by_frame());
    for r in lasting.into_iter().chain(frames) {
        out.entry(r.object).or_insert_with(|| RootInfo {
            kind: r.kind.name().into(),
            detail: root_detail(s, r),
            label: root_label(s, r),
        });
    }
    for &o in starts {
        out.entry(o).or_insert_with(|| RootInfo {
            kind: VM_HELD_CLASS.into(),
            detail: s.mirror_class(o).map(|c| format!("class {}", s.classes().get(c).name)).unwrap_or_default(),
            label: "held by the VM".into(),
        });
    }
    out
}

/// How reports name thread `t` of the snapshot.
pub fn thread_label(s: &Snapshot, t: usize) -> String {
    let who = s.thread_identity(t);
    let serial = s.threads.get(t).map_or(0, |t| t.serial);
    report::thread_label(who.name.as_deref(), who.is_virtual, who.tid, serial)
}

/// The root in plain words, its kind named once.
pub(crate) fn root_label(s: &Snapshot, r: &heap::Root) -> String {
    use heap::RootKind as K;
    let thread = match r.detail {
        RootDetail::Thread { thread, frame } => {
            let t = thread_label(s, thread);
            let f = frame.and_then(|d| s.threads[thread].frames.get(d as usize).map(|f| (d, f)));
            Some(match f {
                Some((d, f)) => format!("{t}, frame {d}: {}", frame_text(f)),
                None => t,
            })
        }
        _ => None,
    };
    let of_thread = |what: &str| match &thread {
        Some(t) => format!("{what} of {t}"),
        None => what.to_owned(),
    };
    match r.kind {
        K::JniGlobal => "JNI global reference".into(),
        K::JniLocal => of_thread("JNI local reference"),
        K::JavaFrame => of_thread("local variable"),
        K::NativeStack => of_thread("native stack"),
        K::StickyClass => "system class".into(),
        K::ThreadBlock => of_thread("thread block"),
        K::MonitorUsed => "monitor in use (synchronized)".into(),
        K::ThreadObject => thread.unwrap_or_else(|| "running thread".into()),
        K::InternedString => "interned string".into(),
        K::Finalizing => "waiting for finalization".into(),
        K::Debugger => "held by a debugger".into(),
        K::ReferenceCleanup => "reference cleanup".into(),
        K::VmInternal => "held by the VM".into(),
        K::JniMonitor => of_thread("JNI monitor"),
        K::Unknown | K::Unreachable => "unknown root".into(),
    }
}

fn root_detail(s: &Snapshot, r: &heap::Root) -> String {
    let mirror = s.mirror_class(r.object).map(|c| format!("class {}", s.classes().get(c).name));
    match r.detail {
        RootDetail::Thread { thread, frame } => {
            let t = &s.threads[thread];
            let f = frame.and_then(|d| t.frames.get(d as usize).map(|f| (d, f)));
            let name = thread_label(s, thread);
            match f {
                Some((d, f)) => format!("{name} frame {d}: {}", frame_text(f)),
                None => name,
            }
        }
        RootDetail::JniGlobal { ref_id } => mirror.unwrap_or_else(|| format!("global reference 0x{ref_id:x}")),
        RootDetail::None => mirror.unwrap_or_default(),
    }
}

/// `Class.method(File.java:12)`.
pub fn frame_text(f: &heap::Frame) -> String {
    let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
    format!("{}.{}({}{line})", f.class, f.method, f.source_file.as_deref().unwrap_or("?"))
}
