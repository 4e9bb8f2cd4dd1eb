//! Joins a growing structure with the last heap: which objects sit at the structure's place
//! in the heap, how much each retains, how many of the growing objects each holds, and the
//! path from a GC root to each.

use heap::{Live, ObjIdx, Snapshot};
use report::{Holder, LoaderLeak, PathPart, StructureHolder};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::paths::PathFinder;
use crate::retention::{retention_roots, strong_closure, ObjSet, Retention};

/// A holder below this share of the growing objects is shown only when nothing bigger is.
const MIN_SHARE: f64 = 0.03;

/// Up to `max` objects of the last heap at the structure reached by `path` (a finding's
/// path, matched on the path tree `live`, which must have parents), with the instances of
/// class `member` under each, biggest share first. An instance counts for the first object
/// of the structure on its shortest path from a GC root.
pub fn structure_holders(
    s: &Snapshot,
    live: &Live,
    r: &Retention,
    paths: &PathFinder<'_>,
    path: &[PathPart],
    member: &str,
    max: usize,
) -> Vec<StructureHolder> {
    let names = crate::summary::path_volumes(&s.census, &live.nodes);
    let at: FxHashSet<u32> = growth::structures::nodes_at(&names, path).into_iter().collect();
    if at.is_empty() || live.parent.is_empty() {
        return Vec::new();
    }
    let wanted: FxHashSet<heap::ClassIdx> = s.classes().find_all(member).collect();
    let mut credit: FxHashMap<u32, u64> = FxHashMap::default();
    let mut total = 0u64;
    for o in s.objects().filter(|&o| wanted.contains(&s.class_of(o)) && live.is_live(o.index())) {
        let mut x = o.index() as u32;
        // Shortest paths are at most as long as the heap is deep; the bound guards a cycle.
        for _ in 0..1_000_000 {
            if at.contains(&live.node_of[x as usize]) {
                *credit.entry(x).or_default() += 1;
                total += 1;
                break;
            }
            match live.parent[x as usize] {
                heap::live::NONE => break,
                p => x = p,
            }
        }
    }
    let mut found: Vec<(u32, u64)> = credit.into_iter().collect();
    found.sort_by_key(|&(o, c)| (std::cmp::Reverse(c), o));
    let biggest = found.first().map_or(0, |f| f.1);
    found
        .into_iter()
        .filter(|&(_, c)| c == biggest || c as f64 >= MIN_SHARE * total as f64)
        .take(max)
        .map(|(o, c)| StructureHolder {
            holder: holder(s, r, paths, ObjIdx(u64::from(o))),
            instances: c,
            share: c as f64 / total.max(1) as f64,
        })
        .collect()
}

fn holder(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, o: ObjIdx) -> Holder {
    let path = paths.path(o);
    Holder {
        class: s.type_label(o),
        id: report::ObjectId(s.address(o)),
        retained_bytes: r.retained_bytes(o),
        root: path.as_ref().map(|p| p.root.to_report()),
        path: path.map(|p| crate::paths::report_steps(s, &p.steps)).unwrap_or_default(),
    }
}

/// Fills in what keeps a class-loader leak's copies alive in the last heap (path shapes of the
/// loaders, most copies first) and what they retain together.
pub fn loader_leak_details(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, leak: &mut LoaderLeak) {
    let Some(first) = leak.classes.first() else { return };
    let mut loaders: Vec<ObjIdx> = s
        .classes()
        .iter()
        .filter(|(_, c)| &c.name == first && c.loader_id != 0)
        .filter_map(|(_, c)| s.find(c.loader_id))
        .filter(|&o| r.is_live(o) && s.classes().get(s.class_of(o)).name == leak.loader)
        .collect();
    loaders.sort_unstable();
    loaders.dedup();
    leak.held_by = paths.report(String::new(), &loaders, 3).paths;
    // The stale copies: those that nothing holds but what their own shortest path goes
    // through. Cut from each path the objects no other copy's path shares (its own shutdown
    // hook, say), and see which copies the roots no longer reach: the live deployment is
    // still held by the server, however long that path is, the leaked ones are not.
    let chains: Vec<Vec<ObjIdx>> = loaders.iter().filter_map(|&o| paths.chain(o)).collect();
    let mut uses: FxHashMap<ObjIdx, u32> = FxHashMap::default();
    for o in chains.iter().flat_map(|c| c.iter().copied().collect::<FxHashSet<_>>()) {
        *uses.entry(o).or_default() += 1;
    }
    let mut own = ObjSet::new(s.object_count());
    for c in &chains {
        for &o in &c[..c.len() - 1] {
            if uses[&o] == 1 {
                own.insert(o);
            }
        }
    }
    let roots = retention_roots(s);
    let still = strong_closure(s, &roots, Some(&own));
    let stale: Vec<ObjIdx> = loaders.iter().copied().filter(|&o| !still.contains(o)).collect();
    leak.stale = stale.len() as u64;
    leak.retained_bytes = Some(retained_together(s, r, &roots, &stale));
}

/// Bytes that would become unreachable if every object of `group` did: what the group
/// retains together (shared objects included, unlike a sum of retained sizes). `roots` are
/// the snapshot's [`retention_roots`].
fn retained_together(s: &Snapshot, r: &Retention, roots: &[ObjIdx], group: &[ObjIdx]) -> u64 {
    let mut avoid = ObjSet::new(s.object_count());
    for &o in group {
        avoid.insert(o);
    }
    let kept = strong_closure(s, roots, Some(&avoid));
    r.live_bytes().saturating_sub(kept.iter().map(|o| s.shallow_bytes(o)).sum::<u64>())
}
