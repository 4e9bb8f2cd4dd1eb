//! The MCP server's tools, as library functions: each opens what it names (dumps are read
//! once and kept with their analyses while the server runs), answers with the JSON model of
//! the matching command, and cuts long lists to a page, saying in `next.LIST` how many follow
//! and the offset that reads them. The server only translates requests and answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::bail;
use serde_json::Value;

use crate::inputs::{self, InputKind};
use crate::page::{next, Page};
use crate::ReadSettings;

/// What the tools share between calls: how dumps are read, and the dumps read so far.
pub struct Tools {
    settings: ReadSettings,
    show_values: bool,
    /// Dumps read so far with their analyses, by the path they were opened with.
    heaps: Mutex<HashMap<PathBuf, Arc<sql::Heap>>>,
    /// V8 heap snapshots read so far, by the path they were opened with.
    snapshots: Mutex<HashMap<PathBuf, Arc<heapsnapshot::V8Heap>>>,
}

impl Tools {
    /// Tools reading dumps with `settings`; `show_values` lets SQL answers hold strings' text.
    pub fn new(settings: ReadSettings, show_values: bool) -> Tools {
        Tools { settings, show_values, heaps: Mutex::new(HashMap::new()), snapshots: Mutex::new(HashMap::new()) }
    }

    /// The dump at `path` with its analyses, read on first use and kept.
    fn heap(&self, path: &str) -> anyhow::Result<Arc<sql::Heap>> {
        let path = PathBuf::from(path);
        if let Some(h) = self.heaps.lock().unwrap_or_else(|e| e.into_inner()).get(&path) {
            return Ok(h.clone());
        }
        if inputs::kind(&path)? != InputKind::Dump {
            bail!("{} is not a heap dump", path.display());
        }
        let snap = crate::load_snapshot(&path, &self.settings, &graph::NoProgress)?;
        let heap = Arc::new(sql::Heap::new(path.clone(), snap, Arc::new(graph::NoProgress)));
        self.heaps.lock().unwrap_or_else(|e| e.into_inner()).insert(path, heap.clone());
        Ok(heap)
    }

    /// The V8 heap snapshot at `path`, read on first use and kept; `None` when `path` is not
    /// one (a JVM dump, or something else the caller will say it cannot read).
    fn snapshot(&self, path: &str) -> anyhow::Result<Option<Arc<heapsnapshot::V8Heap>>> {
        let path = PathBuf::from(path);
        if let Some(h) = self.snapshots.lock().unwrap_or_else(|e| e.into_inner()).get(&path) {
            return Ok(Some(h.clone()));
        }
        // A dump read before is no snapshot: its file's head is not read again at every call.
        if self.is_kept_dump(&path) || !crate::v8::is_snapshot(&path) {
            return Ok(None);
        }
        let h = Arc::new(crate::v8::load(&path, &self.settings, &graph::NoProgress)?);
        self.snapshots.lock().unwrap_or_else(|e| e.into_inner()).insert(path, h.clone());
        Ok(Some(h))
    }

    /// A JVM dump for a tool that reads no V8 snapshot yet: the command-line's refusal, or
    /// the dump.
    fn jvm_heap(&self, path: &str) -> anyhow::Result<Arc<sql::Heap>> {
        let file = Path::new(path);
        if !self.is_kept_dump(file) && crate::v8::is_snapshot(file) {
            return Err(crate::v8::not_yet(file).into());
        }
        self.heap(path)
    }

    /// Whether the JVM dump at `path` was read before and is kept.
    fn is_kept_dump(&self, path: &Path) -> bool {
        self.heaps.lock().unwrap_or_else(|e| e.into_inner()).contains_key(path)
    }

    /// What each of `paths` is (a dump's counts, a run store's snapshots), dumps kept open.
    pub fn open(&self, paths: &[String]) -> anyhow::Result<Value> {
        let mut out = Vec::new();
        for p in paths {
            let path = Path::new(p);
            out.push(match inputs::kind(path)? {
                InputKind::Dump => match self.snapshot(p)? {
                    Some(h) => {
                        let info = crate::v8::info(&h, path);
                        serde_json::json!({
                            "path": p, "kind": "V8 heap snapshot", "objects": info.objects,
                            "references": info.references,
                        })
                    }
                    None => {
                        let h = self.heap(p)?;
                        let s = &h.snap;
                        serde_json::json!({
                            "path": p, "kind": "heap dump", "objects": s.object_count(),
                            "references": s.edge_count(), "classes": s.classes().len(),
                            "shallow_bytes": s.census.total().shallow_bytes,
                            "timestamp_ms": s.census.header.timestamp_ms,
                        })
                    }
                },
                InputKind::RunStore => {
                    let run = crate::series::read_run(path)?;
                    serde_json::json!({"path": p, "kind": "run store", "snapshots": run.samples.len()})
                }
                InputKind::Summary => serde_json::json!({"path": p, "kind": "summary"}),
            });
        }
        Ok(Value::Array(out))
    }

    /// A dump's facts, as `info`.
    pub fn info(&self, dump: &str) -> anyhow::Result<Value> {
        let (info, _) = crate::one_dump::info(Path::new(dump), &self.settings, &graph::NoProgress)?;
        to_value(&info)
    }

    /// A page of the histogram by `by`, as `histogram`.
    pub fn histogram(&self, dump: &str, by: analysis::GroupBy, page: Page) -> anyhow::Result<Value> {
        let h = crate::one_dump::histogram(Path::new(dump), &self.settings, by, None, &graph::NoProgress)?;
        Ok(page.cut(to_value(&h.histogram)?, "classes"))
    }

    /// The suspects over `threshold_percent` of the live heap, as `suspects`.
    pub fn suspects(&self, dump: &str, threshold_percent: f64) -> anyhow::Result<Value> {
        if !(0.0..=100.0).contains(&threshold_percent) {
            bail!("threshold_percent must be between 0 and 100, not {threshold_percent}");
        }
        if let Some(h) = self.snapshot(dump)? {
            return to_value(&crate::v8::suspects(&h, threshold_percent / 100.0, &graph::NoProgress));
        }
        let h = self.heap(dump)?;
        crate::analyses::suspects_can_be_named(&h.snap)?;
        let paths = analysis::PathFinder::new(&h.snap, &graph::NoProgress);
        to_value(&analysis::suspects(&h.snap, h.retention(), &paths, threshold_percent / 100.0))
    }

    /// A page of what `parent` (an id; the top of the tree for `None`) dominates, as
    /// `dominators`.
    pub fn dominators(&self, dump: &str, parent: Option<&str>, page: Page) -> anyhow::Result<Value> {
        let id = parent.map(str::parse::<report::ObjectId>).transpose()?.map(|id| id.0);
        let limit = page.limit.max(1);
        let report = match self.snapshot(dump)? {
            // The tree is built again for each call: a snapshot's analyses are not kept yet.
            Some(h) => {
                let mut r =
                    crate::v8::dominators(&h, id, page.offset.saturating_add(limit), false, &graph::NoProgress)?;
                r.objects.drain(..page.offset.min(r.objects.len()));
                r
            }
            None => {
                let h = self.heap(dump)?;
                let parent = id.map(|id| analysis::ParentError::find(&h.snap, id)).transpose()?;
                analysis::dominator_report(&h.snap, h.retention(), parent, page.offset, limit, false)?
            }
        };
        let mut doc = to_value(&report)?;
        if report.more > 0 {
            next(&mut doc, "objects", report.more as usize, page.offset + report.objects.len());
        }
        Ok(doc)
    }

    /// Up to `max` path shapes from GC roots to the objects `selector` picks, as `paths`.
    pub fn paths(&self, dump: &str, selector: &str, max: usize) -> anyhow::Result<Value> {
        let selector: analysis::Selector = selector.parse()?;
        if let Some(h) = self.snapshot(dump)? {
            return to_value(&crate::v8::paths(&h, &selector, max.max(1))?);
        }
        let h = self.heap(dump)?;
        to_value(&crate::analyses::paths(&h.snap, &selector, max.max(1), &graph::NoProgress)?)
    }

    /// Sizes of the groups `selectors` pick, alone and together, as `retained`.
    pub fn retained(&self, dump: &str, selectors: &[String]) -> anyhow::Result<Value> {
        if selectors.is_empty() {
            bail!("selectors is empty: give at least one, such as static:com.example.Cache.ENTRIES");
        }
        let selectors: Vec<analysis::Selector> = selectors.iter().map(|t| t.parse()).collect::<Result<_, _>>()?;
        if let Some(h) = self.snapshot(dump)? {
            return to_value(&crate::v8::retained(&h, &selectors)?);
        }
        let h = self.heap(dump)?;
        to_value(&crate::analyses::retained(&h.snap, &selectors, &graph::NoProgress)?)
    }

    /// A page of the findings and candidates of growth over `inputs` (or one run store), with
    /// `holders` holders per structure; a candidate inside a finding names it instead of
    /// repeating it.
    pub fn growth(&self, inputs: &[String], holders: usize, explain: bool, page: Page) -> anyhow::Result<Value> {
        let inputs: Vec<PathBuf> = inputs.iter().map(PathBuf::from).collect();
        let options = growth::Options::default();
        let report = match inputs::run_store(&inputs)? {
            Some(store) => crate::series::run_report(&crate::series::read_run(store)?, &options, &[]),
            None => {
                let request = crate::series::SeriesRequest {
                    inputs: &inputs,
                    settings: &self.settings,
                    options: &options,
                    explain: &[],
                    keep_last: false,
                };
                crate::series::growth_of_series(request, usize::MAX, holders, &graph::NoProgress)?
            }
        };
        let mut doc = to_value(&report)?;
        fold_candidates(&mut doc);
        if !explain {
            // Why each structure was chosen is the CLI's --explain text: half of an answer
            // on a real Tomcat series, and asked for only when wanted.
            for f in doc.get_mut("findings").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(f) = f.as_object_mut() {
                    f.remove("why");
                }
            }
        }
        Ok(page.cut(page.cut(doc, "findings"), "candidates"))
    }

    /// A page of each list of the changes from `old` to `new`, as `diff`.
    pub fn diff(&self, old: &str, new: &str, page: Page) -> anyhow::Result<Value> {
        let old = inputs::summary_of(Path::new(old), &self.settings, &graph::NoProgress)?;
        let new = inputs::summary_of(Path::new(new), &self.settings, &graph::NoProgress)?;
        let mut doc = to_value(&growth::diff(&old, &new))?;
        let lists: Vec<String> = doc
            .as_object()
            .map(|o| o.iter().filter(|(_, v)| v.is_array()).map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        for key in lists {
            doc = page.cut(doc, &key);
        }
        Ok(doc)
    }

    /// A page of the watched objects of `store` unused for `older_than_ms`, as `stale`.
    pub fn stale(&self, store: &str, older_than_ms: u64, now_ms: u64, page: Page) -> anyhow::Result<Value> {
        let path = PathBuf::from(store);
        if !path.is_file() {
            bail!("{} is not a file: give a run store (.db)", path.display());
        }
        Ok(page.cut(to_value(&crate::staleness::of_store(&path, older_than_ms, now_ms)?)?, "paths"))
    }

    /// A page of the objects declared dead and still reachable in `target`, as `check`.
    pub fn check(&self, target: &str, page: Page) -> anyhow::Result<Value> {
        let report = crate::expectations::of_file(Path::new(target), &self.settings, &graph::NoProgress)?;
        Ok(page.cut(to_value(&report)?, "groups"))
    }

    /// A page of the rows of `query` over `dumps`, as `sql --json`.
    pub fn sql(&self, dumps: &[String], query: &str, page: Page) -> anyhow::Result<Value> {
        if dumps.is_empty() {
            bail!("dumps is empty: give at least one heap dump");
        }
        let heaps = dumps.iter().map(|d| self.jvm_heap(d)).collect::<anyhow::Result<Vec<_>>>()?;
        let session = sql::Session::shared(heaps, sql::Settings { show_values: self.show_values })?;
        let answer = session.query(query)?.to_json()?;
        Ok(page.cut(to_value(&answer)?, "rows"))
    }
}

/// A growth answer's candidates that pile up in a finding, said once: such a candidate keeps
/// its class, rank and growth and names its finding (`in_finding`, the index in `findings`);
/// its slice, holders and volumes repeat the finding's (77% of a 26 kB answer, issue 35).
fn fold_candidates(doc: &mut Value) {
    let members: Vec<Vec<String>> = doc["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    let members = f["members"].as_array().map(Vec::as_slice).unwrap_or_default();
                    members.iter().filter_map(|m| m["class"].as_str().map(str::to_owned)).collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(candidates) = doc["candidates"].as_array_mut() else { return };
    for c in candidates {
        let class = c["class"].as_str().unwrap_or_default().to_owned();
        if let Some(at) = members.iter().position(|m| m.contains(&class)) {
            *c = serde_json::json!({
                "class": class,
                "rank": c["rank"],
                "growth_bytes": c["growth_bytes"],
                "in_finding": at,
            });
        }
    }
}

fn to_value<T: serde::Serialize>(model: &T) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(model)?)
}
