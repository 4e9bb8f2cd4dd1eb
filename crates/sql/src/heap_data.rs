//! One heap a session queries, and what its costlier columns need, computed once.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use analysis::Retention;
use datafusion::arrow::array::{ArrayRef, StringArray};
use heap::{ClassIdx, ObjIdx, RootKind, Snapshot};
use rustc_hash::FxHashMap;

/// A heap dump open for queries.
pub struct Heap {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its snapshot.
    pub snap: Snapshot,
    progress: Arc<dyn graph::Progress + Send>,
    retention: OnceLock<Retention>,
    depth: OnceLock<Vec<u32>>,
    class_retained: OnceLock<Vec<u64>>,
    root_kinds: OnceLock<FxHashMap<u64, RootKind>>,
    statics: OnceLock<Vec<(ClassIdx, u16, ObjIdx)>>,
    class_names: OnceLock<ArrayRef>,
}

impl std::fmt::Debug for Heap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heap").field("path", &self.path).field("snap", &self.snap).finish()
    }
}

/// `depth` of an object no strong path reaches.
pub(crate) const UNREACHED: u32 = u32::MAX;

impl Heap {
    /// A heap read from `path`; `progress` hears the dominator tree and the other costly
    /// columns being computed.
    pub fn new(path: PathBuf, snap: Snapshot, progress: Arc<dyn graph::Progress + Send>) -> Heap {
        Heap {
            path,
            snap,
            progress,
            retention: OnceLock::new(),
            depth: OnceLock::new(),
            class_retained: OnceLock::new(),
            root_kinds: OnceLock::new(),
            statics: OnceLock::new(),
            class_names: OnceLock::new(),
        }
    }

    /// What hears the costly computations' progress.
    pub(crate) fn progress(&self) -> &dyn graph::Progress {
        self.progress.as_ref()
    }

    /// The dominator tree and retained sizes, built on first use.
    pub fn retention(&self) -> &Retention {
        self.retention.get_or_init(|| Retention::build(&self.snap, self.progress.as_ref()))
    }

    /// Each object's number of strong references from the nearest GC root ([`UNREACHED`] when
    /// none leads to it), from one breadth-first search.
    pub(crate) fn depths(&self) -> &[u32] {
        self.depth.get_or_init(|| {
            let s = &self.snap;
            let mut depth = vec![UNREACHED; s.object_count() as usize];
            let starts = analysis::retention_roots(s);
            let claim = |o: ObjIdx, how: analysis::Reached| {
                if depth[o.index()] != UNREACHED {
                    return false;
                }
                depth[o.index()] = match how {
                    analysis::Reached::Start(_) => 0,
                    analysis::Reached::From(p) => depth[p.index()] + 1,
                };
                true
            };
            analysis::strong_bfs(s, &starts, starts.len(), claim, self.progress.as_ref());
            depth
        })
    }

    /// Per class, the bytes its instances retain together as MAT's histogram counts them: the
    /// retained sizes of the instances no other instance of the class dominates.
    pub(crate) fn class_retained(&self) -> &[u64] {
        self.class_retained.get_or_init(|| {
            let s = &self.snap;
            let r = self.retention();
            let tree = r.tree_children();
            let mut open = vec![0u32; s.classes().len()];
            let mut sums = vec![0u64; s.classes().len()];
            // Depth-first over the dominator tree, counting per class the instances on the
            // path from the top: an instance with none above it is a top one.
            let mut stack: Vec<(usize, bool)> = vec![(analysis::node::SUPER_ROOT, false)];
            while let Some((v, leaving)) = stack.pop() {
                if let Some(o) = analysis::node::object(v) {
                    let c = s.class_of(o).index();
                    if leaving {
                        open[c] -= 1;
                        continue;
                    }
                    if open[c] == 0 {
                        sums[c] += r.retained_bytes(o);
                    }
                    open[c] += 1;
                }
                if !leaving {
                    stack.push((v, true));
                    stack.extend(tree.successors(v).map(|w| (w as usize, false)));
                }
            }
            sums
        })
    }

    /// The kind of each object's first GC root, by object index.
    pub(crate) fn root_kinds(&self) -> &FxHashMap<u64, RootKind> {
        self.root_kinds.get_or_init(|| {
            let mut kinds = FxHashMap::default();
            for r in &self.snap.roots {
                kinds.entry(r.object.0).or_insert(r.kind);
            }
            kinds
        })
    }

    /// Every non-null static reference field ([`Snapshot::static_refs`]).
    pub(crate) fn statics(&self) -> &[(ClassIdx, u16, ObjIdx)] {
        self.statics.get_or_init(|| self.snap.static_refs())
    }

    /// Every class's name, by class index: the dictionary of the `class` columns.
    pub(crate) fn class_names(&self) -> &ArrayRef {
        self.class_names.get_or_init(|| {
            let names = StringArray::from_iter_values(self.snap.classes().iter().map(|(_, c)| c.name.as_str()));
            std::sync::Arc::new(names)
        })
    }
}
