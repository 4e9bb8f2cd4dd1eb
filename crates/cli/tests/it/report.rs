//! The HTML report, opened in headless Chromium: a real leak series, a single dump, and a
//! dump whose class and field names are markup.

use std::path::{Path, PathBuf};

use serde_json::Value;
use testkit::{HeapBuilder, Ty};

use crate::growth::series;
use crate::support::{chromium, leakscope};

/// Runs `report` on `inputs` into `html`, with `--json`; the model.
fn report(inputs: &[PathBuf], html: &Path) -> Value {
    let mut args = vec!["report", "--quiet", "-o", html.to_str().unwrap(), "--json"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn a_leak_series_shows_the_candidate_its_slice_and_the_last_heap() {
    let (dir, dumps) = series("map", 6);
    let html = dir.path().join("report.html");
    let model = report(&dumps, &html);
    let first = &model["growth"]["candidates"][0];
    let class = first["class"].as_str().unwrap();
    assert!(!first["holders"].as_array().unwrap().is_empty(), "holders of {class}");
    assert!(!model["heap"]["dominator_tree"].as_array().unwrap().is_empty());
    assert!(model["class_curves"].as_array().unwrap().len() >= 3);
    assert_eq!(model["class_curves"][0]["volumes"].as_array().unwrap().len(), 6);

    let page = chromium(&html, "report-map-series");
    assert!(page.console.is_empty(), "console: {:?}", page.console);
    assert!(page.dom.contains("growing data structure"), "verdict missing");
    assert!(page.dom.contains(class), "top candidate {class} not on the page");
    assert!(page.dom.contains("class=\"slice\""), "no slice diagram");
    assert!(page.dom.contains("static sessions"), "the holder's path through the static field");
    for section in ["id=\"growth\"", "id=\"suspects\"", "id=\"dominators\"", "id=\"roots\"", "id=\"histogram\""] {
        assert!(page.dom.contains(section), "{section} missing");
    }
    let html_text = std::fs::read_to_string(&html).unwrap();
    for external in ["http://", "https://", "<script", "src=\""] {
        assert!(!html_text.replace("http://www.w3.org/2000/svg", "").contains(external), "{external} in the page");
    }
}

#[test]
fn a_single_dump_has_no_growth_section() {
    let (dir, dumps) = series("phases", 1);
    let html = dir.path().join("one.html");
    let model = report(&dumps, &html);
    assert!(model["growth"].is_null());
    assert!(model["heap"]["histogram"]["classes"].as_array().unwrap().len() <= 50);
    let page = chromium(&html, "report-single-dump");
    assert!(page.console.is_empty(), "console: {:?}", page.console);
    assert!(!page.dom.contains("id=\"growth\""));
    assert!(page.dom.contains("id=\"dominators\""));
}

/// Five heaps in which instances of a class named like markup pile up in an array held by a
/// static field named like markup.
pub(crate) fn hostile_series(dir: &Path) -> Vec<PathBuf> {
    (1..=5)
        .map(|phase| {
            let mut h = HeapBuilder::new();
            let item = h.class("<script>alert(1)</script>Item", None, &[("payload", Ty::Object)]);
            let holder = h.class("Holder\"><img src=x onerror=alert(2)>", None, &[]);
            let items: Vec<_> = (0..phase * 400)
                .map(|_| {
                    let o = h.instance(item);
                    let payload = h.primitive_array(Ty::Byte, 200);
                    h.set(o, "payload", payload);
                    Some(o)
                })
                .collect();
            let array = h.object_array("[Ljava/lang/Object;", &items);
            h.static_ref(holder, "<b>items</b>", Some(array));
            h.sticky_class(holder);
            let path = dir.join(format!("hostile-{phase}.hprof"));
            std::fs::write(&path, h.build()).unwrap();
            path
        })
        .collect()
}

#[test]
fn markup_in_class_and_field_names_renders_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = hostile_series(dir.path());
    let html = dir.path().join("hostile.html");
    let model = report(&dumps, &html);
    let slice: Vec<&str> = model["growth"]["candidates"][0]["slice"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    // The dump's name is a JVM name: its '/' reads as a package separator.
    assert!(slice.contains(&"<script>alert(1)<.script>Item"), "slice: {slice:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(!text.contains("<script") && !text.contains("<img") && !text.contains("<b>items"));
    assert!(text.contains("&lt;script&gt;alert(1)&lt;.script&gt;Item"));
    assert!(text.contains("Holder&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    let page = chromium(&html, "report-hostile-names");
    assert!(page.console.is_empty(), "console: {:?}", page.console);
    assert!(!page.dom.contains("<script") && !page.dom.contains("<img"), "markup became elements");
    assert!(page.dom.contains("&lt;script&gt;alert(1)&lt;.script&gt;Item"), "the name is shown as text");
}

#[test]
fn bad_invocations_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = hostile_series(dir.path());
    let out = leakscope(&["report", "--quiet", dumps[0].to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o FILE.html"));
    let summary = dir.path().join("s.json");
    let out = leakscope(&["summary", "--quiet", dumps[0].to_str().unwrap(), "-o", summary.to_str().unwrap()]);
    assert!(out.status.success());
    let out = leakscope(&["report", "--quiet", summary.to_str().unwrap(), "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one saved summary"));
    let out = leakscope(&["report", "--quiet", dumps[0].to_str().unwrap(), "-o", "/nonexistent/dir/r.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
}
