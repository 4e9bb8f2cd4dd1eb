//! `leakscope serve`: the report as a local web UI, with the trees browsed on demand.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use graph::Progress;

use app::browse::Browser;
use app::leak_report::Analyses;

use render::Html;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;
use crate::series_args::ViewArgs;

mod query;
use query::{bad, not_found, Failure, Query};

/// Serve the leak report as a local web UI: the growth view with each candidate's slice, an
/// expandable dominator tree, a grouping tree re-grouped by any classifiers (count, shallow,
/// deep and retained columns), a comparison of any two heaps of the series, and an inspector
/// that shows, for a class or an object, its fields, elements and referrers, its paths from GC
/// roots and what it retains. A search box finds classes by name and objects by id. Long
/// lists are fetched a page at a time.
///
/// The UI listens on 127.0.0.1 only: everything in the heap is shown to whoever connects.
/// It is read-only, answers GET alone, and refuses requests whose Host is not this machine's
/// loopback name (a web page elsewhere cannot reach it through DNS rebinding). Inputs are read
/// as `report` reads them; the last one must be a dump for the trees and the inspector.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # then open http://127.0.0.1:7878/
  leakscope serve day1.hprof day2.hprof day3.hprof
  leakscope serve app.hprof --port 9000
  # any free port; the address is printed
  leakscope serve app.hprof --port 0
  # from your machine, to look at a dump on `server`
  ssh -L 7878:127.0.0.1:7878 server

JSON API (GET only; every answer is one JSON document):
  /api/report
      the report's model, as `report --json`
  /api/compare?baseline=0&current=3
      two heaps of a series: their `diff`, and `growth` from one to the other
  /api/dominators?parent=0xID&offset=0&limit=25
      objects a node dominates (no parent: the top)
  /api/group?by=package,class&node=0&offset=0&limit=25
      sub-groups of a grouping node
  /api/group/sizes?by=package,class&node=N
      deep and retained bytes of one group
  /api/object?id=0xID&elements_from=0&referrers_from=0&limit=25
      an object: fields, elements, referrers, dominator, sizes, paths
  /api/class?name=NAME
      all instances of a class together
  /api/search?q=TEXT&offset=0&limit=25
      classes whose name contains TEXT")]
pub struct ServeArgs {
    /// Heap dumps (.hprof), V8 heap snapshots (.heapsnapshot) or saved summaries (.json), oldest first; or one agent run store (RUN.db).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Port to listen on (0 picks a free one).
    #[arg(long, value_name = "PORT", default_value_t = 7878)]
    pub port: u16,
    /// Address to listen on. Anything but a loopback address also needs --expose-heap-to-network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Allow --bind on a non-loopback address: anyone who can reach it sees the whole heap.
    #[arg(long)]
    pub expose_heap_to_network: bool,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// The script of the served page.
const APP_JS: &str = include_str!("../../../assets/app.js");

/// Runs the command.
pub fn run(args: &ServeArgs) -> anyhow::Result<Exit> {
    if !args.bind.is_loopback() && !args.expose_heap_to_network {
        anyhow::bail!(
            "refusing to serve on {}: the UI shows the whole heap (class and field names, object graph{}) \
             to anyone who can connect. Keep the default 127.0.0.1 and reach it through an SSH tunnel \
             (ssh -L {port}:127.0.0.1:{port} HOST), or add --expose-heap-to-network if you mean it",
            args.bind,
            if args.view.show_values { ", string contents" } else { "" },
            // With --port 0 the port is chosen later: the tunnel needs the one printed then.
            port = if args.port == 0 { "PORT".to_string() } else { args.port.to_string() }
        );
    }
    // Listen first: a busy port is an error before minutes of analysis, not after.
    let server = tiny_http::Server::http((args.bind, args.port))
        .map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e} (pick another --port)", args.bind, args.port))?;
    let bar = Bar::new(args.dump_args.quiet);
    let view = args.view.view()?;
    let mut gathered = app::leak_report::gather(&args.inputs, &view, &args.dump_args.settings(), &bar)?;
    let last = gathered.last.take();
    let series = gathered.series.clone();
    let analyses = last.as_ref().map(|snap| Analyses::of_last(snap, args.inputs.len(), &bar));
    let report = app::leak_report::model(&args.inputs, &view, gathered, analyses.as_ref(), &bar);
    let browse = analyses.as_ref().map(|a| Browser::new(a, &bar));
    bar.finish();
    let port = server.server_addr().to_ip().map_or(args.port, |a| a.port());
    let state = State {
        page: report.to_served_html(),
        report_json: serde_json::to_string(&report)?,
        browse,
        series,
        options: view.options,
        show_values: args.view.show_values,
        hosts: if args.expose_heap_to_network { None } else { Some(loopback_hosts(port)) },
    };
    let shown = if args.bind.is_ipv6() { format!("[{}]", args.bind) } else { args.bind.to_string() };
    if args.expose_heap_to_network {
        eprintln!(
            "WARNING: serving the whole heap{} to the network on {shown}:{port}, without authentication. \
             Anyone who can reach this address can read it.",
            if args.view.show_values { ", string contents included," } else { "" }
        );
    }
    eprintln!("leakscope: serving http://{shown}:{port}/ (Ctrl-C to stop)");
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                while let Ok(req) = server.recv() {
                    let _ = state.answer(req);
                }
            });
        }
    });
    Ok(Exit::Success)
}

/// Requests answered at once: a slow closure does not stall the page.
const WORKERS: usize = 3;

/// Host header values that name this server on loopback.
fn loopback_hosts(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| format!("{h}:{port}")).collect()
}

/// Everything the server answers from.
struct State<'a, 's> {
    page: String,
    report_json: String,
    browse: Option<Browser<'a, 's>>,
    /// The heaps' summaries, oldest first, for the comparison view.
    series: Vec<growth::HeapSummary>,
    /// How growth is judged.
    options: growth::Options,
    show_values: bool,
    /// Allowed Host headers; `None` when exposed on purpose.
    hosts: Option<Vec<String>>,
}

/// A successful answer: content type and body.
struct Body(&'static str, String);

impl State<'_, '_> {
    fn answer(&self, req: tiny_http::Request) -> std::io::Result<()> {
        let head = *req.method() == tiny_http::Method::Head;
        let result = self.route(&req);
        let (status, body) = match result {
            Ok(body) => (200, body),
            Err(Failure(status, error)) => (
                status,
                Body("application/json", serde_json::to_string(&report::ApiError { error }).unwrap_or_default()),
            ),
        };
        let mut response = tiny_http::Response::from_string(if head { String::new() } else { body.1 })
            .with_status_code(status)
            .with_header(header("Content-Type", &format!("{}; charset=utf-8", body.0)));
        for (k, v) in [
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
            ("Cache-Control", "no-store"),
        ] {
            response.add_header(header(k, v));
        }
        if status == 405 {
            response.add_header(header("Allow", "GET, HEAD"));
        }
        req.respond(response)
    }

    fn route(&self, req: &tiny_http::Request) -> Result<Body, Failure> {
        if !matches!(req.method(), tiny_http::Method::Get | tiny_http::Method::Head) {
            return Err(Failure(405, "read-only: only GET and HEAD are answered".into()));
        }
        if let Some(hosts) = &self.hosts {
            let host = req.headers().iter().find(|h| h.field.equiv("Host")).map(|h| h.value.as_str());
            if !host.is_some_and(|h| hosts.iter().any(|ok| ok.eq_ignore_ascii_case(h))) {
                return Err(Failure(
                    403,
                    format!(
                        "Host {:?} is not this machine's loopback address; open http://{}/",
                        host.unwrap_or(""),
                        hosts[0]
                    ),
                ));
            }
        }
        let (path, query) = req.url().split_once('?').unwrap_or((req.url(), ""));
        let q = Query::parse(query);
        match path {
            "/" | "/index.html" => Ok(Body("text/html", self.page.clone())),
            "/app.js" => Ok(Body("text/javascript", APP_JS.to_string())),
            "/api/report" => Ok(Body("application/json", self.report_json.clone())),
            "/api/compare" => {
                let (baseline, current) = (q.number("baseline", 0)?, q.number("current", self.series.len())?);
                let c = app::leak_report::compare(&self.series, baseline, current, &self.options)
                    .map_err(|e| bad(e.to_string()))?;
                Ok(Body("application/json", to_json(&c)))
            }
            "/api/dominators" | "/api/group" | "/api/group/sizes" | "/api/object" | "/api/class" | "/api/search" => {
                let b = self
                    .browse
                    .as_ref()
                    .ok_or_else(|| not_found("the last input is not a heap dump: there are no objects to browse"))?;
                let json = match path {
                    "/api/dominators" => {
                        let parent = q.get("parent").filter(|p| !p.is_empty()).map(|_| q.id("parent")).transpose()?;
                        to_json(&b.dominators(parent, q.page()?)?)
                    }
                    "/api/group" => to_json(&b.group(q.need("by")?, q.node()?, q.page()?)?),
                    "/api/group/sizes" => to_json(&b.group_sizes(q.need("by")?, q.node()?)?),
                    "/api/object" => {
                        let page = analysis::InspectPage {
                            elements_from: q.number("elements_from", 0)? as u64,
                            referrers_from: q.number("referrers_from", 0)? as u64,
                            limit: q.page()?.limit,
                            show_values: self.show_values,
                        };
                        to_json(&b.object(q.id("id")?, page)?)
                    }
                    "/api/class" => to_json(&b.class(q.need("name")?)?),
                    _ => {
                        let query = q.get("q").unwrap_or("").trim();
                        let id = dump_args::parse_id(query)
                            .ok()
                            .filter(|_| query.starts_with("0x") || query.starts_with("0X"));
                        to_json(&b.search(query, id, q.page()?))
                    }
                };
                Ok(Body("application/json", json))
            }
            _ => Err(not_found(format!("no page at {path}"))),
        }
    }
}

fn header(k: &str, v: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("static header names and ASCII values are valid")
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
