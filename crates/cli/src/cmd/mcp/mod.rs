//! `leakscope mcp`: a Model Context Protocol server over stdio, so that an AI assistant can
//! investigate a leak with leakscope's questions. Each dump is read once and kept with its
//! dominator tree while the server runs; every answer is a JSON model of the matching command,
//! with long lists cut to a page and a cursor for the next. Read-only: no tool writes a file
//! or touches a JVM.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use app::page::Page;
use app::tools::Tools;
use clap::Args;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::by::By;
use crate::dump_args::DumpArgs;
use crate::exit::Exit;

mod requests;
use requests::*;

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
    let tools = Tools::new(args.read.settings(), args.show_values);
    let server = Server { tools: Arc::new(tools), tool_router: Server::tool_router() };
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

/// The MCP server: the tools, and the state they share.
#[derive(Clone)]
struct Server {
    tools: Arc<Tools>,
    tool_router: ToolRouter<Server>,
}

/// A tool's answer: the model as JSON text.
fn reply<T: serde::Serialize>(model: &T) -> Result<CallToolResult, ErrorData> {
    let text = serde_json::to_string(model).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// A page from a request's `offset` and `limit`, `limit` defaulting to `default`.
fn page(offset: usize, limit: Option<usize>, default: usize) -> Page {
    Page { offset, limit: limit.unwrap_or(default) }
}

impl Server {
    /// Runs `work` on a thread that may block (reading dumps, building dominator trees,
    /// the SQL engine's own runtime); its failure, even a panic, is an error result, never a
    /// crash.
    async fn blocking(
        &self,
        work: impl FnOnce(&Tools) -> anyhow::Result<Value> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let tools = self.tools.clone();
        // A failure is the tool's result, marked an error, so that the assistant reads why
        // (as for arguments that do not fit the tool's schema) and can correct its call.
        let failed = |text: String| Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
        match tokio::task::spawn_blocking(move || work(&tools)).await {
            Ok(Ok(doc)) => reply(&doc),
            Ok(Err(e)) => failed(format!("{e:#}")),
            Err(e) => failed(format!("internal error, please report it: {e}")),
        }
    }
}

#[tool_router]
impl Server {
    #[tool(
        description = "Open heap dumps, run stores or summaries, and say what each is: for a dump, its objects, classes, bytes and time; the dumps stay open for the other tools. Optional: every tool opens what it names."
    )]
    async fn open(&self, Parameters(req): Parameters<OpenRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.open(&req.inputs)).await
    }

    #[tool(
        description = "One dump's facts: format, identifier size, object layout, counts of objects, classes and references, GC roots by kind, and warnings."
    )]
    async fn info(&self, Parameters(req): Parameters<DumpRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.info(&req.input)).await
    }

    #[tool(
        description = "Instances and shallow bytes per class (or package, or class hierarchy), biggest first, as the JVM's own class histogram counts them. A first look at what fills the heap."
    )]
    async fn histogram(&self, Parameters(req): Parameters<HistogramRequest>) -> Result<CallToolResult, ErrorData> {
        let by = req.by.unwrap_or(By::Class).into();
        self.blocking(move |t| t.histogram(&req.input, by, page(req.offset, req.limit, 30))).await
    }

    #[tool(
        description = "With one dump: the objects that keep the biggest shares of the live heap alive, each with its path from a GC root, the data structure where memory accumulates and what it holds. Start here when there is a single dump."
    )]
    async fn suspects(&self, Parameters(req): Parameters<SuspectsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.suspects(&req.input, req.threshold_percent.unwrap_or(10.0))).await
    }

    #[tool(
        description = "The dominator tree: which objects keep the most memory alive. Without parent, the top of the tree; with parent (an id), the objects it alone keeps alive, biggest first. retained_bytes is what the GC would free if that object became unreachable."
    )]
    async fn dominators(&self, Parameters(req): Parameters<DominatorsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.dominators(&req.input, req.parent.as_deref(), page(req.offset, req.limit, 20))).await
    }

    #[tool(
        description = "Why objects are alive: the shortest chains of strong references from GC roots to the selected objects, grouped by shape with a count. Use it on the holder growth or suspects named."
    )]
    async fn paths(&self, Parameters(req): Parameters<PathsRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.paths(&req.input, &req.selector, req.max.unwrap_or(5))).await
    }

    #[tool(
        description = "Sizes of groups of objects: their shallow bytes, what they reach (transitive bytes), and what the GC would free if the whole group became unreachable (retained bytes), per group and for all groups together."
    )]
    async fn retained(&self, Parameters(req): Parameters<RetainedRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.retained(&req.input, &req.selectors)).await
    }

    #[tool(
        description = "Growth over a series of dumps of one process, oldest first (or over an agent's run store): the classes whose instances keep growing, ranked, each finding with the data structure that holds the growing objects (holder), its path and how much it grew; a candidate that piles up in a finding names it (in_finding) instead of repeating it. The main tool for a leak that takes hours or days."
    )]
    async fn growth(&self, Parameters(req): Parameters<GrowthRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| {
            t.growth(&req.inputs, req.holders.unwrap_or(3), req.explain, page(req.offset, req.limit, 10))
        })
        .await
    }

    #[tool(
        description = "What changed between two dumps: classes whose instances and bytes changed most, and references between classes that were added or removed."
    )]
    async fn diff(&self, Parameters(req): Parameters<DiffRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.diff(&req.old, &req.new, page(req.offset, req.limit, 30))).await
    }

    #[tool(
        description = "From an agent run store with last-access monitoring: objects the program still holds but has not used for a while, grouped by reference path, with their last-access ages. Stale objects are what a leak is made of."
    )]
    async fn stale(&self, Parameters(req): Parameters<StaleRequest>) -> Result<CallToolResult, ErrorData> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let older = req.older_than_seconds.unwrap_or(0).saturating_mul(1000);
        self.blocking(move |t| t.stale(&req.input, older, now, page(req.offset, req.limit, 50))).await
    }

    #[tool(
        description = "Objects the program declared dead (leakscope's expectDead API) that are still reachable, grouped by path from a GC root, in a heap dump or a run store."
    )]
    async fn check(&self, Parameters(req): Parameters<CheckRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.check(&req.input, page(req.offset, req.limit, 50))).await
    }

    #[tool(
        description = "Any other question, in SQL over one or more dumps. Tables: heaps(heap, path, objects, refs, classes, roots, shallow_bytes, timestamp_ms), classes(heap, id, name, package, loader, super, instances, shallow_bytes, retained_bytes), objects(heap, id, class, class_id, shallow_bytes, retained_bytes, dominator, depth, reachable, root_kind, array_length, text), refs(heap, from, to, field, strength), roots(heap, object, kind, thread, frame, static_field), fields(heap, object, class, name, declared_by, static, type, value, ref, string). Table functions: dominated(id), path_to_root(id), retained_set(selector), instances_of(class, with_subclasses). Example: SELECT class, count(*), sum(retained_bytes) FROM objects GROUP BY class ORDER BY 3 DESC LIMIT 10."
    )]
    async fn sql(&self, Parameters(req): Parameters<SqlRequest>) -> Result<CallToolResult, ErrorData> {
        self.blocking(move |t| t.sql(&req.inputs, &req.query, page(req.offset, req.limit, 100))).await
    }
}

#[tool_handler(router = self.tool_router, name = "leakscope", instructions = "leakscope finds memory leaks in Java heap dumps (.hprof), in V8 heap snapshots of Node.js and Chrome (.heapsnapshot: every tool but stale, check and sql reads them) and in the runs its JVM agent recorded (.db run stores). To investigate a leak: 1. With several dumps of one process taken over time (oldest first), call growth with them: it ranks the classes whose instances keep growing, names the data structure that holds them (the holder, a field such as Cache.entries, with its object id) and how much it grew. With one dump, call suspects: the objects that keep the biggest shares of the heap alive, with their paths from GC roots. 2. Call paths with a selector for the holder (id:0xADDR, static:CLASS.FIELD or class:NAME) to see the chain of references from a GC root that keeps it alive. 3. Call dominators with the holder's id as parent, and retained with its selector, to see what freeing it would give back. 4. For anything else, call sql (tables heaps, classes, objects, refs, roots, fields; functions dominated, path_to_root, retained_set, instances_of). Paths are files on the server's machine. Long lists come a page at a time: when an answer has next.LIST, call again with its offset.")]
impl ServerHandler for Server {}
