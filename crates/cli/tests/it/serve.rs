//! `leakscope serve`: the web UI driven in headless Chromium on a real leak series, its JSON
//! API checked against the text commands, and what it refuses.

use std::io::{Read, Write};

use serde_json::Value;

use crate::growth::series;
use crate::report::hostile_series;
use crate::support::leakscope;
use crate::webdriver::{Browser, Server};

fn strs(v: &Value) -> Vec<&str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

#[test]
fn the_ui_expands_trees_searches_and_shows_what_holds_the_leak() {
    let (_dir, dumps) = series("map", 4);
    let paths: Vec<&str> = dumps.iter().map(|p| p.to_str().unwrap()).collect();
    let server = Server::start(&paths);
    let (status, model) = server.get("/api/report");
    assert_eq!(status, 200);
    let class = model["growth"]["candidates"][0]["class"].as_str().expect("a candidate").to_string();

    let b = Browser::start();
    b.goto(&format!("{}/", server.base));
    b.wait_for("document.querySelectorAll('#domtree .row').length > 0");
    let structure = model["growth"]["findings"][0]["structure"].as_str().expect("a finding").to_string();
    assert!(b.text(&b.find("#growth .finding h3")).contains(&structure), "the top finding heads the growth view");
    assert_eq!(b.text(&b.find("#growth .cand:not(.finding) h3")), class, "then the candidates");
    assert!(b.eval("return document.querySelector('#growth svg.slice') !== null") == Value::Bool(true), "no slice");
    // The charts' axis is time since the first dump, from the dumps' headers.
    let axis =
        b.eval("return [...document.querySelector('#growth svg').querySelectorAll('text')].map(t => t.textContent)");
    assert!(strs(&axis).contains(&"0 s") && strs(&axis).iter().any(|t| t.starts_with('+')), "time labels: {axis}");
    let caption = b.text(&b.find("#growth p.axis"));
    assert!(caption.contains("since the first heap") && caption.contains(" UTC"), "{caption}");

    // The comparison view: the first and the last heap, as `diff` and `growth` say.
    b.eval("document.getElementById('baseline').value = '0'; document.getElementById('current').value = '3';");
    b.click(&b.find("#compare-form button"));
    b.wait_for("document.querySelectorAll('#compare-classes tr').length > 1");
    let diff = crate::support::json(&["diff", "--quiet", "--json", paths[0], paths[3]]);
    let shown =
        b.eval("return [...document.querySelectorAll('#compare-classes tr td:first-child')].map(t => t.textContent)");
    let expected: Vec<&str> =
        diff["classes"].as_array().unwrap().iter().take(25).map(|c| c["class"].as_str().unwrap()).collect();
    assert_eq!(strs(&shown), expected, "class deltas as `diff` orders them");
    let edges = b.eval("return document.querySelectorAll('#compare-edges tr').length");
    assert_eq!(edges.as_u64(), Some(diff["edges"].as_array().unwrap().len().min(25) as u64 + 1));
    assert!(b.text(&b.find("#compare-findings")).contains(&class), "the growing class between them");
    b.eval("document.getElementById('compare').scrollIntoView();");
    b.screenshot("serve-compare");

    // Expanding the top dominator fetches the objects it dominates, in the server's order.
    let top = b
        .eval("return document.querySelector('#domtree > .row button.tog:not([disabled])').parentElement.dataset.node");
    let top = top.as_str().expect("an expandable dominator").to_string();
    assert_eq!(b.eval("return document.querySelectorAll('#domtree .kids .row').length"), Value::from(0));
    b.click(&b.find("#domtree > .row button.tog:not([disabled])"));
    b.wait_for("document.querySelectorAll('#domtree > .kids .row').length > 0");
    let (_, kids) = server.get(&format!("/api/dominators?parent={top}&limit=25"));
    let shown = b.eval("return [...document.querySelectorAll('#domtree > .kids > .row')].map(r => r.dataset.node)");
    let expected: Vec<&str> = kids["objects"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(strs(&shown), expected, "children of {top}");

    // The grouping tree: expanding a package shows its classes; deep and retained sizes arrive.
    b.wait_for("document.querySelectorAll('#grouptree > .row.group').length > 0");
    b.click(&b.find("#grouptree > .row.group button.tog:not([disabled])"));
    b.wait_for("document.querySelectorAll('#grouptree .kids .row.group').length > 0");
    b.wait_for("[...document.querySelectorAll('#grouptree .row.group')].every(r => r.children[4].textContent !== '…')");
    // Re-grouped by the root that keeps objects alive.
    b.eval("document.getElementById('by').value = 'indirectly-rooted,class';");
    b.click(&b.find("#groupby button"));
    b.wait_for(
        "[...document.querySelectorAll('#grouptree > .row.group')].some(r => r.textContent.startsWith('▸Root: '))",
    );

    // A box of the slice diagram opens its class in the inspector.
    let boxed = b.eval(&format!(
        "return [...document.querySelectorAll('#growth svg.slice g[data-class]')].map(g => g.dataset.class).find(c => c === {class:?})"
    ));
    assert_eq!(boxed.as_str(), Some(class.as_str()), "the candidate has a box");
    b.click(&b.find(&format!("#growth svg.slice g[data-class={class:?}]")));
    b.wait_for(&format!(
        "document.querySelector('#detail h3') && document.querySelector('#detail h3').textContent === {class:?}"
    ));

    // Search for the class, open it: its paths from GC roots go through the static map.
    b.eval("document.getElementById('detail').replaceChildren();");
    b.type_into(&b.find("#q"), &class);
    b.click(&b.find("#search button"));
    b.wait_for(&format!(
        "[...document.querySelectorAll('#results td[data-class]')].some(t => t.textContent === {class:?})"
    ));
    b.eval(&format!(
        "[...document.querySelectorAll('#results td[data-class]')].find(t => t.textContent === {class:?}).click();"
    ));
    b.wait_for("document.querySelector('#detail h3') !== null && document.querySelector('#detail .path') !== null");
    let detail = b.text(&b.find("#detail"));
    assert!(detail.contains(&class) && detail.contains("static sessions"), "class view: {detail}");
    // One of its biggest instances: an object view with its own path.
    b.click(&b.find("#detail ul.mono [data-id]"));
    b.wait_for("document.querySelector('#detail').textContent.includes('retained (freed with it)') && !document.querySelector('#detail').textContent.includes('All instances')");
    // Its fields and referrers, as the API gives them; a referrer opens in turn.
    b.wait_for("document.querySelector('#fields') !== null && document.querySelector('#referrers') !== null");
    let id = b.eval("return document.querySelector('#detail h3 span.muted').textContent");
    let (_, view) = server.get(&format!("/api/object?id={}", id.as_str().unwrap()));
    let names = b.eval("return [...document.querySelectorAll('#fields tr td:first-child')].map(t => t.textContent)");
    let expected: Vec<&str> = view["fields"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(!expected.is_empty(), "{view}");
    assert_eq!(strs(&names), expected, "fields of {id}");
    let heads = b.eval("return [...document.querySelectorAll('#referrers th')].map(t => t.textContent)");
    assert_eq!(strs(&heads), ["strength", "field", "referenced by"]);
    let referrers = b.eval("return [...document.querySelectorAll('#referrers [data-id]')].map(t => t.dataset.id)");
    let expected: Vec<&str> =
        view["referrers"]["rows"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(!expected.is_empty(), "a biggest instance is referenced: {view}");
    assert_eq!(strs(&referrers), expected, "referrers of {id}");
    b.screenshot("serve-inspector");
    b.click(&b.find("#referrers [data-id]"));
    b.wait_for(&format!("document.querySelector('#detail h3 span.muted').textContent === {:?}", expected[0]));
    b.screenshot("serve-map-series");
    // The address names what the inspector shows, and such a deep link opens it.
    assert_eq!(b.eval("return location.hash").as_str(), Some(format!("#object={}", expected[0]).as_str()));
    let id = id.as_str().unwrap();
    b.goto(&format!("{}/#object={id}", server.base));
    b.wait_for(&format!(
        "document.querySelector('#detail h3 span.muted') !== null && document.querySelector('#detail h3 span.muted').textContent === {id:?}"
    ));
    // The console is really read: a message logged on purpose comes back, and nothing else.
    b.eval("console.error('leakscope-probe');");
    let problems = b.console_problems();
    assert!(problems.len() == 1 && problems[0].contains("leakscope-probe"), "console: {problems:?}");
}

#[test]
fn markup_in_names_stays_text_in_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = hostile_series(dir.path());
    let paths: Vec<&str> = dumps.iter().map(|p| p.to_str().unwrap()).collect();
    let server = Server::start(&paths);
    let b = Browser::start();
    b.goto(&format!("{}/", server.base));
    b.wait_for("document.querySelectorAll('#domtree .row').length > 0");
    b.type_into(&b.find("#q"), "script");
    b.click(&b.find("#search button"));
    b.wait_for("document.querySelector('#results td[data-class]') !== null");
    let found = b.text(&b.find("#results td[data-class]"));
    assert_eq!(found, "<script>alert(1)<.script>Item");
    b.click(&b.find("#results td[data-class]"));
    b.wait_for("document.querySelector('#detail .path') !== null");
    assert!(b.text(&b.find("#detail")).contains("Holder\"><img src=x onerror=alert(2)>"), "the holder, as text");
    assert_eq!(b.eval("return document.querySelectorAll('script').length"), Value::from(1), "only /app.js");
    assert_eq!(b.eval("return document.querySelectorAll('img, b').length"), Value::from(0), "markup became elements");
    b.screenshot("serve-hostile-names");
    assert_eq!(b.console_problems(), Vec::<String>::new(), "console");
}

/// Sends one raw request (to set a Host header of our choosing); the status code.
fn raw(base: &str, request: &str) -> u16 {
    let mut s = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[test]
fn the_api_pages_agrees_with_the_commands_and_refuses_what_it_should() {
    let (_dir, dumps) = series("map", 2);
    let last = dumps[1].to_str().unwrap();
    let server = Server::start(&[last]);

    // Pages of the top of the dominator tree: consecutive, no overlap, same total.
    let (_, p1) = server.get("/api/dominators?limit=5");
    let (_, p2) = server.get("/api/dominators?offset=5&limit=5");
    let (_, all) = server.get("/api/dominators?limit=10");
    let ids = |p: &Value| -> Vec<String> {
        p["objects"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!([ids(&p1), ids(&p2)].concat(), ids(&all));
    assert_eq!(p1["total"], all["total"]);
    let (_, capped) = server.get("/api/dominators?limit=100000");
    assert!(capped["objects"].as_array().unwrap().len() <= 500);

    // The dominators command lists the same children of the same node.
    let out = leakscope(&["dominators", "--quiet", "--json", "--top", "5", last]);
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cli_ids: Vec<String> =
        cli["objects"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().into()).collect();
    assert_eq!(ids(&p1), cli_ids);

    // Group sizes equal those of `leakscope group` for the same node.
    let (_, g) = server.get("/api/group?by=class&limit=1");
    let biggest = &g["children"][0];
    let (_, sizes) = server.get(&format!("/api/group/sizes?by=class&node={}", biggest["node"]));
    let out = leakscope(&["group", "--quiet", "--json", "--by", "class", "--top", "1", last]);
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let node = &cli["tree"]["children"][0];
    assert_eq!(node["key"], biggest["key"]);
    assert_eq!(node["deep_bytes"], sizes["sizes"]["transitive_bytes"]);
    assert_eq!(node["retained_bytes"], sizes["sizes"]["retained_bytes"]);

    // An object's paths are those of `leakscope paths`.
    let (_, class) = server.get("/api/class?name=Growth%24Session");
    assert_eq!(class["sizes"]["objects"], Value::from(1500), "a quarter of 3000 sessions per phase");
    let id = class["biggest"][0]["id"].as_str().unwrap().to_string();
    let (_, object) = server.get(&format!("/api/object?id={id}"));
    let out = leakscope(&["paths", "--quiet", "--json", "--select", &format!("id:{id}"), last]);
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["paths"]["paths"], cli["paths"]);
    assert!(object.get("value").is_none());

    // No string contents without --show-values.
    let (_, kids) = server.get(&format!("/api/dominators?parent={id}"));
    let string = kids["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["class"] == "java.lang.String")
        .expect("a session dominates its user name")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, s) = server.get(&format!("/api/object?id={string}"));
    assert!(s.get("value").is_none(), "a value without --show-values: {s}");
    let shown = Server::start(&[last, "--show-values"]);
    let (_, s) = shown.get(&format!("/api/object?id={string}"));
    let text = s["value"].as_str().expect("the string's text with --show-values");
    assert!(text.starts_with("user-") && text[5..].parse::<u32>().is_ok(), "{text:?}");

    // Errors are JSON with a reason and the right status.
    assert_eq!(server.get("/api/object?id=0x1").0, 404);
    assert_eq!(server.get("/api/object?id=nope").0, 400);
    assert_eq!(server.get("/api/group?by=colour").0, 400);
    assert_eq!(server.get("/api/group?by=class&node=99999999").0, 404);
    assert_eq!(server.get("/api/nothing").0, 404);
    let (code, err) = server.get("/api/dominators?offset=x");
    assert_eq!((code, err["error"].as_str().unwrap()), (400, "offset=\"x\" is not a number"));

    // Read-only, and only for this machine's names.
    let port = server.base.rsplit(':').next().unwrap();
    let get = |host: &str| raw(&server.base, &format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"));
    assert_eq!(get(&format!("127.0.0.1:{port}")), 200);
    assert_eq!(get(&format!("localhost:{port}")), 200);
    assert_eq!(get(&format!("attacker.example:{port}")), 403);
    let post = format!(
        "POST /api/report HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(&server.base, &post), 405);

    // Anything but loopback needs the loud flag.
    let out = leakscope(&["serve", "--quiet", "--bind", "0.0.0.0", last]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to serve on 0.0.0.0") && err.contains("--expose-heap-to-network"), "{err}");
}
