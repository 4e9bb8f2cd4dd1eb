//! Browsing the last dump's analyses a page at a time, as `serve`'s web UI asks: the
//! dominator tree, grouping trees (built on first use and kept), an object, a class, and
//! search. Requests are typed here; the web server only translates its query strings.

use std::sync::{Arc, Mutex};

use heap::ObjIdx;

use crate::leak_report::Analyses;
use crate::page::Page;

/// How many grouping trees are kept for the next pages (each costs a pass over the heap).
const GROUPINGS: usize = 6;

/// Why a browsing request has no answer.
#[derive(Debug, thiserror::Error)]
pub enum BrowseError {
    /// The request asks for something that cannot be (an unknown classifier, an object that
    /// dominates nothing).
    #[error("{0}")]
    Bad(String),
    /// What it names is not in the dump.
    #[error("{0}")]
    NotFound(String),
}

/// The last dump's analyses, with the indexes browsing needs.
pub struct Browser<'a, 's> {
    a: &'a Analyses<'s>,
    /// Dominator tree children, node 0 the super-root and node `i + 1` object `i`.
    tree: graph::Csr,
    inspector: analysis::Inspector<'a, 's>,
    /// Every class, biggest shallow bytes first.
    histogram: report::Histogram,
    groupings: Mutex<Vec<(String, Arc<analysis::GroupTree>)>>,
}

impl<'a, 's> Browser<'a, 's> {
    /// Builds the dominator tree's child lists, the inspector and the histogram of `a`.
    pub fn new(a: &'a Analyses<'s>, progress: &dyn graph::Progress) -> Browser<'a, 's> {
        Browser {
            a,
            tree: a.retention.tree_children(),
            inspector: analysis::Inspector::new(a.snap, &a.retention, &a.paths, &a.closures, progress),
            histogram: analysis::histogram(&a.snap.census, analysis::GroupBy::Class),
            groupings: Mutex::new(Vec::new()),
        }
    }

    fn row(&self, o: ObjIdx, of: u64) -> report::DominatorRow {
        self.inspector.row(o, of)
    }

    fn object_at(&self, id: u64) -> Result<ObjIdx, BrowseError> {
        self.a.snap.find(id).ok_or_else(|| BrowseError::NotFound(format!("no object at address 0x{id:x} in the dump")))
    }

    /// The objects the object at `parent` (the top of the tree for `None`) immediately
    /// dominates, biggest retained size first.
    pub fn dominators(&self, parent: Option<u64>, page: Page) -> Result<report::DominatorPage, BrowseError> {
        let r = &self.a.retention;
        let parent = parent.map(|id| self.object_at(id)).transpose()?;
        if let Some(p) = parent.filter(|p| !r.is_live(*p)) {
            return Err(BrowseError::Bad(format!(
                "{} is not strongly reachable from a GC root: it dominates nothing",
                report::ObjectId(self.a.snap.address(p))
            )));
        }
        let node = analysis::node::of_parent(parent);
        let kids: Vec<ObjIdx> = self.tree.successors(node).filter_map(|v| analysis::node::object(v as usize)).collect();
        let total = kids.len();
        let kids = r.biggest_first(kids, page.offset.saturating_add(page.limit));
        let of = parent.map_or(r.live_bytes(), |p| r.retained_bytes(p));
        let objects = kids
            .into_iter()
            .skip(page.offset)
            .map(|o| {
                let object = self.row(o, of);
                report::DomNode { more: object.children, object, value: None, nodes: Vec::new() }
            })
            .collect();
        Ok(report::DominatorPage {
            parent: parent.map(|p| self.row(p, r.live_bytes())),
            total: total as u64,
            offset: page.offset as u64,
            objects,
        })
    }

    /// The grouping tree for the classifiers `by` (comma-separated), built on first use and
    /// kept for the next pages.
    fn grouping(&self, by: &str) -> Result<(Vec<String>, Arc<analysis::GroupTree>), BrowseError> {
        let by: Vec<analysis::Classifier> =
            by.split(',').map(str::parse).collect::<Result<_, String>>().map_err(BrowseError::Bad)?;
        let names: Vec<String> = by.iter().map(ToString::to_string).collect();
        let key = names.join(",");
        let found = self.lock().iter().find(|(k, _)| *k == key).map(|(_, t)| Arc::clone(t));
        let tree = match found {
            Some(t) => t,
            None => {
                let t = Arc::new(analysis::GroupTree::build(self.a.snap, &by));
                let mut kept = self.lock();
                if kept.len() >= GROUPINGS {
                    kept.remove(0);
                }
                kept.push((key, Arc::clone(&t)));
                t
            }
        };
        Ok((names, tree))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Arc<analysis::GroupTree>)>> {
        self.groupings.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn group_node(tree: &analysis::GroupTree, node: Option<usize>) -> Result<usize, BrowseError> {
        let node = node.unwrap_or(analysis::GroupTree::ROOT);
        if tree.contains(node) {
            Ok(node)
        } else {
            Err(BrowseError::NotFound(format!("no group {node} in this grouping")))
        }
    }

    /// The sub-groups of `node` (the root for `None`) in the grouping by `by`.
    pub fn group(&self, by: &str, node: Option<usize>, page: Page) -> Result<report::GroupPage, BrowseError> {
        let (by, tree) = self.grouping(by)?;
        let node = Self::group_node(&tree, node)?;
        let kids = tree.children(node);
        let child = |n: usize| report::GroupChild { node: n as u64, group: tree.row(n) };
        Ok(report::GroupPage {
            by,
            parent: child(node),
            total: kids.len() as u64,
            offset: page.offset as u64,
            children: kids.iter().skip(page.offset).take(page.limit).map(|&n| child(n)).collect(),
        })
    }

    /// Deep and retained sizes of `node` in the grouping by `by`.
    pub fn group_sizes(&self, by: &str, node: Option<usize>) -> Result<report::GroupSizesView, BrowseError> {
        let (_, tree) = self.grouping(by)?;
        let node = Self::group_node(&tree, node)?;
        Ok(report::GroupSizesView { node: node as u64, sizes: self.a.closures.sizes(&tree.members(node)).totals() })
    }

    /// The object at `id`: its fields, elements and referrers from the page's positions.
    pub fn object(&self, id: u64, page: analysis::InspectPage) -> Result<report::ObjectView, BrowseError> {
        Ok(self.inspector.view(self.object_at(id)?, page))
    }

    /// The class `name`: what its instances keep, their paths from GC roots, the biggest.
    pub fn class(&self, name: &str) -> Result<report::ClassView, BrowseError> {
        let (s, r) = (self.a.snap, &self.a.retention);
        let selector: analysis::Selector =
            format!("class:{name}").parse().map_err(|e: analysis::SelectError| BrowseError::Bad(e.to_string()))?;
        let objects = selector.select(s).map_err(|e| BrowseError::NotFound(e.to_string()))?;
        let biggest = r.biggest_first(objects.clone(), 10);
        Ok(report::ClassView {
            class: name.to_string(),
            sizes: self.a.closures.sizes(&objects).totals(),
            paths: self.a.paths.report(selector.to_string(), &objects, 5),
            biggest: biggest.into_iter().map(|o| self.row(o, r.live_bytes())).collect(),
        })
    }

    /// Classes whose name holds `query` (any case), and the object `id` when the query was an
    /// address that is in the dump.
    pub fn search(&self, query: &str, id: Option<u64>, page: Page) -> report::SearchPage {
        let needle = query.to_lowercase();
        let matching: Vec<&report::HistogramRow> =
            self.histogram.classes.iter().filter(|c| c.name.to_lowercase().contains(&needle)).collect();
        let object = id.and_then(|id| self.a.snap.find(id)).map(|o| report::ObjectId(self.a.snap.address(o)));
        report::SearchPage {
            total: matching.len() as u64,
            offset: page.offset as u64,
            classes: matching.into_iter().skip(page.offset).take(page.limit).cloned().collect(),
            object,
            query: query.to_string(),
        }
    }
}
