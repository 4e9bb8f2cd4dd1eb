//! `leakscope mcp` driven by a client nobody here wrote: the reference Python SDK's
//! `ClientSession` (PyPI `mcp`, installed by scripts/test), through `tests/python/mcp_driver.py`.
//! On Tomcat's leaking series (`apps.rs`, JDK 17 and 25) it lists the tools, opens the series,
//! reaches the leak's holder through `growth`, then `paths` and `dominators`, pages a
//! histogram, asks SQL, and gets MCP errors (never a crash) for bad arguments. Answers are held
//! to the commands' own on the same dumps.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::json as cli_json;

/// One MCP server under the Python client, spoken to a call at a time.
struct Client {
    child: Child,
    input: ChildStdin,
    lines: Receiver<String>,
}

impl Client {
    /// Starts `leakscope mcp` under the client; `None` (after [`crate::support::missing`])
    /// when Python's `mcp` package is not installed.
    fn start() -> Option<(Client, Value)> {
        let probe = Command::new("python3").args(["-c", "import mcp"]).output();
        if !probe.is_ok_and(|o| o.status.success()) {
            crate::support::missing("Python's mcp package (the reference MCP client)");
            return None;
        }
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_driver.py");
        let mut child = Command::new("python3")
            .arg(driver)
            .args([env!("CARGO_BIN_EXE_leakscope"), "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts");
        let input = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Client { child, input, lines };
        let tools = client.next_line();
        Some((client, tools))
    }

    fn next_line(&mut self) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(300)) {
            Ok(line) => serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")),
            Err(e) => {
                let _ = self.child.kill();
                panic!("the MCP client said nothing for 5 minutes, or ended ({e})");
            }
        }
    }

    /// Calls `tool`; the answer's JSON, or `Err` with the message of an error result or of
    /// an MCP error (an unknown tool).
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let request = json!({"tool": tool, "arguments": arguments});
        writeln!(self.input, "{request}").unwrap();
        let reply = self.next_line();
        let text = reply["text"].as_str().unwrap_or_default();
        if reply["ok"] != true {
            return Err(reply["error"].as_str().unwrap_or_default().to_owned());
        }
        if reply["is_error"] == true {
            return Err(text.to_owned());
        }
        Ok(serde_json::from_str(text).unwrap_or_else(|e| panic!("{tool}: {e}: {text}")))
    }

    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        self.call(tool, arguments).unwrap_or_else(|e| panic!("{tool}: {e}"))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command's JSON without what every document adds.
fn model(mut doc: Value) -> Value {
    for key in ["schema_version", "warnings", "truncated_at"] {
        doc.as_object_mut().unwrap().remove(key);
    }
    doc
}

/// The investigation of Tomcat's session leak, as an assistant would run it.
pub fn assert_mcp_on_tomcat(dumps: &[PathBuf]) {
    let Some((mut client, tools)) = Client::start() else { return };
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "open",
        "info",
        "histogram",
        "suspects",
        "dominators",
        "paths",
        "retained",
        "growth",
        "diff",
        "stale",
        "check",
        "sql",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    for t in tools["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 60, "{t}");
        assert_eq!(t["input_schema"]["type"], "object", "{t}");
    }
    // The sql tool's description lists the tables as they are.
    let sql_tool = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "sql").unwrap();
    let description = sql_tool["description"].as_str().unwrap();
    for t in sql::tables() {
        let columns: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
        let listed = format!("{}({})", t.name, columns.join(", "));
        assert!(description.contains(&listed), "the sql tool does not list {listed}");
    }
    let paths: Vec<&str> = dumps.iter().map(|p| p.to_str().unwrap()).collect();
    let last = *paths.last().unwrap();

    let opened = client.ok("open", json!({"inputs": paths}));
    let info = cli_json(&["info", "--quiet", "--json", last]);
    assert_eq!(opened[7]["objects"], info["objects"], "{opened}");
    assert_eq!(opened[7]["kind"], "heap dump");

    // Growth names the sessions' map and its object in the last dump, as `growth` does.
    let growth = client.ok("growth", json!({"inputs": paths}));
    let mut args = vec!["growth", "--quiet", "--json"];
    args.extend(&paths);
    let by_cli = cli_json(&args);
    let finding = &growth["findings"][0];
    assert_eq!(finding["structure"], "org.apache.catalina.session.StandardManager.sessions", "{finding}");
    assert_eq!(finding["structure"], by_cli["findings"][0]["structure"]);
    let holder = finding["holders"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(holder, by_cli["findings"][0]["holders"][0]["id"].as_str().unwrap());
    // A candidate that piles up in a finding is said once, by the finding.
    let session = growth["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "org.apache.catalina.session.StandardSession")
        .unwrap_or_else(|| panic!("{growth}"));
    assert_eq!((session["in_finding"].as_u64(), session.get("slice")), (Some(0), None), "{session}");
    // Why each structure was chosen is the CLI's --explain text: left out unless asked.
    assert!(finding.get("why").is_none(), "{finding}");
    assert!(by_cli["findings"][0]["why"].as_array().is_some_and(|w| !w.is_empty()));
    let explained = client.ok("growth", json!({"inputs": paths, "explain": true, "limit": 1}));
    assert_eq!(explained["findings"][0]["why"], by_cli["findings"][0]["why"]);

    // What keeps the holder alive, and what it keeps: the same as `paths` and `dominators`.
    let selector = format!("id:{holder}");
    // The argument's name of before (`dump`) is still read.
    let path = client.ok("paths", json!({"dump": last, "selector": selector}));
    assert_eq!(path, model(cli_json(&["paths", "--quiet", "--json", "--select", &selector, last])));
    let steps = path["paths"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.last().unwrap()["id"], holder.as_str());
    assert!(steps.iter().any(|s| s["class"] == "org.apache.catalina.session.StandardManager"), "{path}");
    let children = client.ok("dominators", json!({"input": last, "parent": holder, "limit": 20}));
    let by_cli = cli_json(&["dominators", "--quiet", "--json", "--children", &holder, "--top", "20", last]);
    assert_eq!(children["objects"], by_cli["objects"]);
    assert!(!children["objects"].as_array().unwrap().is_empty());

    // A histogram a page at a time: the second page is the command's rows 5 to 9.
    let first = client.ok("histogram", json!({"input": last, "limit": 5}));
    assert_eq!(first["classes"].as_array().unwrap().len(), 5);
    let offset = first["next"]["classes"]["offset"].as_u64().unwrap();
    assert_eq!(offset, 5);
    let second = client.ok("histogram", json!({"input": last, "offset": offset, "limit": 5}));
    let all = cli_json(&["histogram", "--quiet", "--json", "--top", "10", last]);
    assert_eq!(second["classes"], json!(all["classes"].as_array().unwrap()[5..10]));

    // SQL on the dumps the server keeps open.
    let sessions = "SELECT count(*) AS n FROM objects WHERE class = 'org.apache.catalina.session.StandardSession'";
    let answer = client.ok("sql", json!({"inputs": [last], "query": sessions}));
    let histogram = cli_json(&["histogram", "--quiet", "--json", "--top", "0", last]);
    let expected = histogram["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "org.apache.catalina.session.StandardSession")
        .unwrap()["instances"]
        .clone();
    assert_eq!(answer["rows"][0][0], expected);

    // Bad arguments are error results that say why (an unknown tool an MCP error), and the
    // server goes on.
    let bad: [(&str, Value, &str); 6] = [
        ("paths", json!({"input": last, "selector": "nonsense"}), "not a selector"),
        ("dominators", json!({"input": "/nonexistent.hprof"}), "/nonexistent.hprof"),
        ("dominators", json!({"input": last, "parent": "0x5"}), "no object at address 0x5"),
        ("sql", json!({"inputs": [last], "query": "SELEKT 1"}), "SELEKT"),
        ("retained", json!({"input": last}), "selectors"),
        ("nothing", json!({}), "not found"),
    ];
    for (tool, arguments, reason) in bad {
        let error = client.call(tool, arguments.clone()).expect_err(&format!("{tool} {arguments}"));
        assert!(error.contains(reason), "{tool} {arguments}: {error}");
    }
    let again = client.ok("sql", json!({"inputs": [last], "query": "SELECT 1 AS one"}));
    assert_eq!(again["rows"], json!([[1]]));
}

/// The bundled Chromium page's snapshot through the MCP server, as an assistant would look at
/// it: each tool that reads V8 snapshots answers what the command answers (the commands are
/// held to Python's count and memlab's retained sizes in `v8.rs`), pages as it does for dumps,
/// and `sql`, which reads JVM dumps only, says so, naming the tools that read snapshots.
#[test]
fn a_pages_snapshot_over_mcp_answers_as_the_commands_do() {
    let Some((mut client, _)) = Client::start() else { return };
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo-page.heapsnapshot.gz");
    let snap = snap.to_str().unwrap();
    let info = cli_json(&["info", "--json", "-q", snap]);
    let opened = client.ok("open", json!({"inputs": [snap]}));
    assert_eq!(opened[0]["kind"], "V8 heap snapshot", "{opened}");
    assert_eq!([&opened[0]["objects"], &opened[0]["references"]], [&info["objects"], &info["references"]], "{opened}");
    assert_eq!(model(client.ok("info", json!({"input": snap}))), model(info));

    let suspects = client.ok("suspects", json!({"input": snap}));
    assert_eq!(model(suspects.clone()), model(cli_json(&["suspects", "--json", "-q", snap])));
    assert_eq!(suspects["suspects"][0]["data_structure"], "rowCache (closure variable)", "{suspects:#}");

    // The top of the tree, then what its biggest node dominates a page at a time (by V8
    // id): two pages of 3 are the command's first 6.
    let top = cli_json(&["dominators", "--json", "-q", "--top", "5", snap]);
    assert_eq!(client.ok("dominators", json!({"input": snap, "limit": 5}))["objects"], top["objects"]);
    let id = top["objects"][0]["id"].as_str().unwrap();
    let whole = cli_json(&["dominators", "--json", "-q", "--children", id, "--top", "6", snap]);
    let first = client.ok("dominators", json!({"input": snap, "parent": id, "limit": 3}));
    let offset = first["next"]["objects"]["offset"].as_u64().expect("a next page");
    let second = client.ok("dominators", json!({"input": snap, "parent": id, "limit": 3, "offset": offset}));
    let rows: Vec<&Value> =
        first["objects"].as_array().unwrap().iter().chain(second["objects"].as_array().unwrap()).collect();
    assert_eq!(rows, whole["objects"].as_array().unwrap().iter().collect::<Vec<_>>());
    assert_eq!(rows.len(), 6, "{whole:#}");

    let paths = client.ok("paths", json!({"input": snap, "selector": "class:Text", "max": 2}));
    assert!(!paths["paths"].as_array().unwrap().is_empty(), "{paths:#}");
    assert_eq!(model(paths), model(cli_json(&["paths", "--json", "-q", "--max", "2", "--select", "class:Text", snap])));

    let retained = client.ok("retained", json!({"input": snap, "selectors": ["class:Text"]}));
    assert_eq!(model(retained), model(cli_json(&["retained", "--json", "-q", "--select", "class:Text", snap])));

    let refused = client.call("sql", json!({"inputs": [snap], "query": "SELECT 1"})).expect_err("sql");
    assert!(refused.contains("V8 heap snapshot") && refused.contains("`suspects`"), "{refused}");
}
