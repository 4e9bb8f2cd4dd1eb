//! `leakscope mcp`: a Model Context Protocol server over stdio, so that an AI assistant can
//! investigate a leak with leakscope's questions. Each dump is read once and kept with its
//! dominator tree while the server runs; every answer is a JSON model of the matching command,
//! with long lists cut to a page and a cursor for the next. Read-only: no tool writes a file
//! or touches a JVM.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use clap::Args;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::Value;

use crate::by::By;
use crate::dump_args::DumpArgs;
use crate::exit::Exit;
use crate::progress::Bar;

/// The arguments of `leakscope mcp` (its help text is the `Mcp` command's doc in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "A client's configuration, for example:\n  {\"mcpServers\": {\"leakscope\": {\"command\": \"leakscope\", \"args\": [\"mcp\"]}}}"
)]
pub struct McpArgs {
    /// Let the tools show strings' text (sql's objects.text and fields.string); they may hold
    /// passwords and personal data.
    #[arg(long)]
    pub show_values: bool,
    #[command(flatten)]
    pub read: DumpArgs,
}

/// Runs the server until the client closes its input.
pub fn run(args: &McpArgs) -> anyhow::Result<Exit> {
    let state =
        State { settings: args.read.settings(), show_values: args.show_values, heaps: Mutex::new(HashMap::new()) };
    let server = Server { state: Arc::new(state), tool_router: Server::tool_router() };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server's threads")?;
    runtime.block_on(async {
        let service = server.serve(rmcp::transport::stdio()).await.context("the MCP handshake failed")?;
        service.waiting().await.context("the MCP connection failed")?;
        anyhow::Ok(())
    })?;
    Ok(Exit::Success)
}

/// What the server keeps between calls.
struct State {
    settings: app::ReadSettings,
    show_values: bool,
    /// Dumps read so far, by the path they were opened with.
    heaps: Mutex<HashMap<PathBuf, Arc<sql::Heap>>>,
}

impl State {
    /// The dump at `path`, read on first use and kept.
    fn heap(&self, path: &str) -> anyhow::Result<Arc<sql::Heap>> {
        let path = PathBuf::from(path);
        if let Some(h) = self.heaps.lock().unwrap_or_else(|e| e.into_inner()).get(&path) {
            return Ok(h.clone());
        }
        if app::inputs::kind(&path)? != app::inputs::InputKind::Dump {
            bail!("{} is not a heap dump", path.display());
        }
        let snap = app::load_snapshot(&path, &self.settings, &quiet())?;
        let heap = Arc::new(sql::Heap::new(path.clone(), snap, Arc::new(quiet())));
        self.heaps.lock().unwrap_or_else(|e| e.into_inner()).insert(path, heap.clone());
        Ok(heap)
    }
}

/// Tools report no progress: the client reads only the protocol on stdout, and stderr is
/// usually nobody's.
fn quiet() -> Bar {
    Bar::new(true)
}

/// The MCP server: the tools, and the state they share.
#[derive(Clone)]
struct Server {
    state: Arc<State>,
    tool_router: ToolRouter<Server>,
}

/// A tool's answer: the model as JSON text.
fn reply<T: serde::Serialize>(model: &T) -> Result<CallToolResult, ErrorData> {
    let text = serde_json::to_string(model).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// Cuts the array at `key` of `doc` to `limit` items from `offset`; when some are left, says
/// in `next.KEY` how many and the offset that reads them (a key no model uses).
fn page(mut doc: Value, key: &str, offset: usize, limit: usize) -> Value {
    let Some(items) = doc.get_mut(key).and_then(Value::as_array_mut) else { return doc };
    let total = items.len();
    let kept: Vec<Value> = items.drain(..).skip(offset).take(limit).collect();
    let end = offset + kept.len();
    *items = kept;
    if end < total {
        next(&mut doc, key, total - end, end);
    }
    doc
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

/// Records in `next.KEY` that `remaining` items of the list `key` follow, from `offset`.
fn next(doc: &mut Value, key: &str, remaining: usize, offset: usize) {
    if !doc["next"].is_object() {
        doc["next"] = serde_json::json!({});
    }
    doc["next"][key] = serde_json::json!({"remaining": remaining, "offset": offset});
}

fn to_value<T: serde::Serialize>(model: &T) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(model)?)
}

impl Server {
    /// Runs `work` on a thread that may block (reading dumps, building dominator trees,
    /// the SQL engine's own runtime); its failure, even a panic, is an error result, never a
    /// crash.
    async fn blocking(
        &self,
        work: impl FnOnce(&State) -> anyhow::Result<Value> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let state = self.state.clone();
        // A failure is the tool's result, marked an error, so that the assistant reads why
        // (as for arguments that do not fit the tool's schema) and can correct its call.
        let failed = |text: String| Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
        match tokio::task::spawn_blocking(move || work(&state)).await {
            Ok(Ok(doc)) => reply(&doc),
            Ok(Err(e)) => failed(format!("{e:#}")),
            Err(e) => failed(format!("internal error, please report it: {e}")),
        }
    }
}

/// Arguments naming one dump.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DumpRequest {
    /// Path of the heap dump (.hprof, or gzip of one).
    dump: String,
}

/// Arguments of `open`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct OpenRequest {
    /// Paths of heap dumps (oldest first for a series), run stores (.db) or summaries.
    paths: Vec<String>,
}

/// Arguments of `histogram`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct HistogramRequest {
    /// Path of the heap dump.
    dump: String,
    /// Rows per class (default), per package, or per class hierarchy.
    #[serde(default)]
    by: Option<By>,
    /// The first row to return (0 for the biggest).
    #[serde(default)]
    offset: usize,
    /// Rows to return (default 30).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `suspects`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SuspectsRequest {
    /// Path of the heap dump.
    dump: String,
    /// Smallest share of the live heap, in percent, for a suspect (default 10).
    #[serde(default)]
    threshold_percent: Option<f64>,
}

/// Arguments of `dominators`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DominatorsRequest {
    /// Path of the heap dump.
    dump: String,
    /// The object whose children to list, as 0x-prefixed hexadecimal id; none for the top of
    /// the tree (what only GC roots keep alive).
    #[serde(default)]
    parent: Option<String>,
    /// The first child to return (0 for the biggest).
    #[serde(default)]
    offset: usize,
    /// Children to return (default 20).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `paths`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PathsRequest {
    /// Path of the heap dump.
    dump: String,
    /// Which objects: class:NAME, class:NAME+ (with subclasses), id:0xADDR, static:CLASS.FIELD,
    /// or rule:A>B>C (objects of class C reached through A, then B).
    selector: String,
    /// Distinct path shapes to return (default 5).
    #[serde(default)]
    max: Option<usize>,
}

/// Arguments of `retained`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RetainedRequest {
    /// Path of the heap dump.
    dump: String,
    /// Groups of objects, one selector each (as for paths).
    selectors: Vec<String>,
}

/// Arguments of `growth`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GrowthRequest {
    /// Heap dumps or summaries of one process, oldest first (at least 3); or one run store.
    inputs: Vec<String>,
    /// Holder objects to name per growing structure, with their ids and paths (default 3; 0
    /// skips indexing the last dump).
    #[serde(default)]
    holders: Option<usize>,
    /// The first finding (and candidate) to return.
    #[serde(default)]
    offset: usize,
    /// Findings (and candidates) to return (default 10).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `diff`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DiffRequest {
    /// The earlier heap dump (or summary).
    old: String,
    /// The later one.
    new: String,
    /// The first row of each list to return.
    #[serde(default)]
    offset: usize,
    /// Rows to return per list (default 30).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `stale`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct StaleRequest {
    /// The run store (.db) of an agent run with last-access monitoring.
    store: String,
    /// Report only objects not used for this many seconds (default 0).
    #[serde(default)]
    older_than_seconds: Option<u64>,
    /// The first path to return.
    #[serde(default)]
    offset: usize,
    /// Paths to return (default 50).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `check`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct CheckRequest {
    /// A heap dump or run store of a program that declared objects dead (leakscope's
    /// expectDead API).
    target: String,
    /// The first group to return.
    #[serde(default)]
    offset: usize,
    /// Groups (one per path shape) to return (default 50).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `sql`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SqlRequest {
    /// Heap dumps, numbered from 1 in this order in every table's `heap` column.
    dumps: Vec<String>,
    /// One SQL statement (Apache DataFusion's dialect).
    query: String,
    /// The first row to return.
    #[serde(default)]
    offset: usize,
    /// Rows to return (default 100).
    #[serde(default)]
    limit: Option<usize>,
}

#[tool_router]
impl Server {
    #[tool(
        description = "Open heap dumps, run stores or summaries, and say what each is: for a dump, its objects, classes, bytes and time; the dumps stay open for the other tools. Optional: every tool opens what it names."
    )]
    async fn open(&self, Parameters(req): Parameters<OpenRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let mut out = Vec::new();
            for p in &req.paths {
                let path = Path::new(p);
                let kind = app::inputs::kind(path)?;
                out.push(match kind {
                    app::inputs::InputKind::Dump => {
                        let h = state.heap(p)?;
                        let s = &h.snap;
                        serde_json::json!({
                            "path": p, "kind": "heap dump", "objects": s.object_count(),
                            "references": s.edge_count(), "classes": s.classes().len(),
                            "shallow_bytes": s.census.total().shallow_bytes,
                            "timestamp_ms": s.census.header.timestamp_ms,
                        })
                    }
                    app::inputs::InputKind::RunStore => {
                        let run = app::series::read_run(path)?;
                        serde_json::json!({"path": p, "kind": "run store", "snapshots": run.samples.len()})
                    }
                    app::inputs::InputKind::Summary => serde_json::json!({"path": p, "kind": "summary"}),
                });
            }
            Ok(Value::Array(out))
        })
        .await
    }

    #[tool(
        description = "One dump's facts: format, identifier size, object layout, counts of objects, classes and references, GC roots by kind, and warnings."
    )]
    async fn info(&self, Parameters(req): Parameters<DumpRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let (info, _) = app::one_dump::info(Path::new(&req.dump), &state.settings, &quiet())?;
            to_value(&info)
        })
        .await
    }

    #[tool(
        description = "Instances and shallow bytes per class (or package, or class hierarchy), biggest first, as the JVM's own class histogram counts them. A first look at what fills the heap."
    )]
    async fn histogram(&self, Parameters(req): Parameters<HistogramRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let by = req.by.unwrap_or(By::Class).into();
            let h = app::one_dump::histogram(Path::new(&req.dump), &state.settings, by, None, &quiet())?;
            Ok(page(to_value(&h.histogram)?, "classes", req.offset, req.limit.unwrap_or(30)))
        })
        .await
    }

    #[tool(
        description = "With one dump: the objects that keep the biggest shares of the live heap alive, each with its path from a GC root, the data structure where memory accumulates and what it holds. Start here when there is a single dump."
    )]
    async fn suspects(&self, Parameters(req): Parameters<SuspectsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let h = state.heap(&req.dump)?;
            let paths = analysis::PathFinder::new(&h.snap, &quiet());
            let threshold = req.threshold_percent.unwrap_or(10.0);
            if !(0.0..=100.0).contains(&threshold) {
                bail!("threshold_percent must be between 0 and 100, not {threshold}");
            }
            to_value(&analysis::suspects(&h.snap, h.retention(), &paths, threshold / 100.0))
        })
        .await
    }

    #[tool(
        description = "The dominator tree: which objects keep the most memory alive. Without parent, the top of the tree; with parent (an id), the objects it alone keeps alive, biggest first. retained_bytes is what the GC would free if that object became unreachable."
    )]
    async fn dominators(&self, Parameters(req): Parameters<DominatorsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let h = state.heap(&req.dump)?;
            let id = req.parent.as_deref().map(str::parse::<report::ObjectId>).transpose()?.map(|id| id.0);
            let parent = id.map(|id| analysis::ParentError::find(&h.snap, id)).transpose()?;
            let limit = req.limit.unwrap_or(20).max(1);
            let report = analysis::dominator_report(&h.snap, h.retention(), parent, req.offset, limit, false)?;
            let mut doc = to_value(&report)?;
            if report.more > 0 {
                next(&mut doc, "objects", report.more as usize, req.offset + report.objects.len());
            }
            Ok(doc)
        })
        .await
    }

    #[tool(
        description = "Why objects are alive: the shortest chains of strong references from GC roots to the selected objects, grouped by shape with a count. Use it on the holder growth or suspects named."
    )]
    async fn paths(&self, Parameters(req): Parameters<PathsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let selector: analysis::Selector = req.selector.parse()?;
            let h = state.heap(&req.dump)?;
            let objects = selector.select(&h.snap)?;
            let finder = analysis::PathFinder::new(&h.snap, &quiet());
            to_value(&finder.report(selector.to_string(), &objects, req.max.unwrap_or(5).max(1)))
        })
        .await
    }

    #[tool(
        description = "Sizes of groups of objects: their shallow bytes, what they reach (transitive bytes), and what the GC would free if the whole group became unreachable (retained bytes), per group and for all groups together."
    )]
    async fn retained(&self, Parameters(req): Parameters<RetainedRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            if req.selectors.is_empty() {
                bail!("selectors is empty: give at least one, such as static:com.example.Cache.ENTRIES");
            }
            let selectors: Vec<analysis::Selector> =
                req.selectors.iter().map(|t| t.parse()).collect::<Result<_, _>>()?;
            let h = state.heap(&req.dump)?;
            let s = &h.snap;
            let groups = selectors.iter().map(|sel| sel.select(s)).collect::<Result<Vec<_>, _>>()?;
            to_value(&analysis::Closures::new(s, &quiet()).report(&selectors, &groups))
        })
        .await
    }

    #[tool(
        description = "Growth over a series of dumps of one process, oldest first (or over an agent's run store): the classes whose instances keep growing, ranked, each finding with the data structure that holds the growing objects (holder), its path and how much it grew; a candidate that piles up in a finding names it (in_finding) instead of repeating it. The main tool for a leak that takes hours or days."
    )]
    async fn growth(&self, Parameters(req): Parameters<GrowthRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let inputs: Vec<PathBuf> = req.inputs.iter().map(PathBuf::from).collect();
            let options = growth::Options::default();
            let report = match app::inputs::run_store(&inputs)? {
                Some(store) => app::series::run_report(&app::series::read_run(store)?, &options, &[]),
                None => {
                    let req_series = app::series::SeriesRequest {
                        inputs: &inputs,
                        settings: &state.settings,
                        options: &options,
                        explain: &[],
                        keep_last: false,
                    };
                    app::series::growth_of_series(req_series, usize::MAX, req.holders.unwrap_or(3), &quiet())?
                }
            };
            let limit = req.limit.unwrap_or(10);
            let mut doc = to_value(&report)?;
            fold_candidates(&mut doc);
            let doc = page(doc, "findings", req.offset, limit);
            Ok(page(doc, "candidates", req.offset, limit))
        })
        .await
    }

    #[tool(
        description = "What changed between two dumps: classes whose instances and bytes changed most, and references between classes that were added or removed."
    )]
    async fn diff(&self, Parameters(req): Parameters<DiffRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let old = app::inputs::summary_of(Path::new(&req.old), &state.settings, &quiet())?;
            let new = app::inputs::summary_of(Path::new(&req.new), &state.settings, &quiet())?;
            let mut doc = to_value(&growth::diff(&old, &new))?;
            let limit = req.limit.unwrap_or(30);
            let lists: Vec<String> = doc
                .as_object()
                .map(|o| o.iter().filter(|(_, v)| v.is_array()).map(|(k, _)| k.clone()).collect())
                .unwrap_or_default();
            for key in lists {
                doc = page(doc, &key, req.offset, limit);
            }
            Ok(doc)
        })
        .await
    }

    #[tool(
        description = "From an agent run store with last-access monitoring: objects the program still holds but has not used for a while, grouped by reference path, with their last-access ages. Stale objects are what a leak is made of."
    )]
    async fn stale(&self, Parameters(req): Parameters<StaleRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |_| {
            let path = PathBuf::from(&req.store);
            if !path.is_file() {
                bail!("{} is not a file: give a run store (.db)", path.display());
            }
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
            let older = req.older_than_seconds.unwrap_or(0).saturating_mul(1000);
            Ok(page(
                to_value(&app::staleness::of_store(&path, older, now)?)?,
                "paths",
                req.offset,
                req.limit.unwrap_or(50),
            ))
        })
        .await
    }

    #[tool(
        description = "Objects the program declared dead (leakscope's expectDead API) that are still reachable, grouped by path from a GC root, in a heap dump or a run store."
    )]
    async fn check(&self, Parameters(req): Parameters<CheckRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            let report = app::expectations::of_file(Path::new(&req.target), &state.settings, &quiet())?;
            Ok(page(to_value(&report)?, "groups", req.offset, req.limit.unwrap_or(50)))
        })
        .await
    }

    #[tool(
        description = "Any other question, in SQL over one or more dumps. Tables: heaps(heap, path, objects, refs, classes, roots, shallow_bytes, timestamp_ms), classes(heap, id, name, package, loader, super, instances, shallow_bytes, retained_bytes), objects(heap, id, class, class_id, shallow_bytes, retained_bytes, dominator, depth, reachable, root_kind, array_length, text), refs(heap, from, to, field, strength), roots(heap, object, kind, thread, frame, static_field), fields(heap, object, class, name, declared_by, static, type, value, ref, string). Table functions: dominated(id), path_to_root(id), retained_set(selector), instances_of(class, with_subclasses). Example: SELECT class, count(*), sum(retained_bytes) FROM objects GROUP BY class ORDER BY 3 DESC LIMIT 10."
    )]
    async fn sql(&self, Parameters(req): Parameters<SqlRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |state| {
            if req.dumps.is_empty() {
                bail!("dumps is empty: give at least one heap dump");
            }
            let heaps = req.dumps.iter().map(|d| state.heap(d)).collect::<anyhow::Result<Vec<_>>>()?;
            let session = sql::Session::shared(heaps, sql::Settings { show_values: state.show_values })?;
            let answer = session.query(&req.query)?.to_json()?;
            Ok(page(to_value(&answer)?, "rows", req.offset, req.limit.unwrap_or(100)))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router, name = "leakscope", instructions = "leakscope finds memory leaks in Java heap dumps (.hprof) and in the runs its JVM agent recorded (.db run stores). To investigate a leak: 1. With several dumps of one process taken over time (oldest first), call growth with them: it ranks the classes whose instances keep growing, names the data structure that holds them (the holder, a field such as Cache.entries, with its object id) and how much it grew. With one dump, call suspects: the objects that keep the biggest shares of the heap alive, with their paths from GC roots. 2. Call paths with a selector for the holder (id:0xADDR, static:CLASS.FIELD or class:NAME) to see the chain of references from a GC root that keeps it alive. 3. Call dominators with the holder's id as parent, and retained with its selector, to see what freeing it would give back. 4. For anything else, call sql (tables heaps, classes, objects, refs, roots, fields; functions dominated, path_to_root, retained_set, instances_of). Paths are files on the server's machine. Long lists come a page at a time: when an answer has next.LIST, call again with its offset.")]
impl ServerHandler for Server {}
