//! `leakscope sql`: answers compared with the other commands on the same dump (histogram,
//! info, dominators, retained) and with what the Java program built (its map sizes, its
//! strings, Java's HashMap table sizing). Real frameworks: `apps.rs` runs the same checks on a
//! Tomcat series.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::{json, leakscope, Jdk};

/// Runs one query with `--json`; the rows.
pub fn rows(dumps: &[&str], query: &str, extra: &[&str]) -> Vec<Vec<Value>> {
    let mut args = vec!["sql", "--quiet", "--json"];
    args.extend_from_slice(extra);
    args.extend_from_slice(dumps);
    args.push(query);
    let doc = json(&args);
    doc["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect()
}

fn int(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// An id as SQL's JSON gives it: `0x…` text, as every other output writes ids.
fn id(v: &Value) -> String {
    let text = v.as_str().unwrap_or_else(|| panic!("an id is text: {v}"));
    assert!(text.starts_with("0x") && u64::from_str_radix(&text[2..], 16).is_ok(), "{text}");
    text.to_owned()
}

/// The same dump's histogram, by SQL over the objects and over the classes, equals
/// `leakscope histogram` row for row (whose equality with `jcmd GC.class_histogram` the
/// histogram tests prove); the objects, references and roots counts equal `info`'s.
pub fn assert_agrees_with_histogram_and_info(dump: &str) {
    let histogram = json(&["histogram", "--quiet", "--json", "--top", "0", dump]);
    let expected: BTreeMap<String, (u64, u64)> = histogram["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), (int(&r["instances"]), int(&r["shallow_bytes"]))))
        .collect();
    let by_objects: BTreeMap<String, (u64, u64)> =
        rows(&[dump], "SELECT class, count(*), sum(shallow_bytes) FROM objects GROUP BY class", &[])
            .into_iter()
            .map(|r| (r[0].as_str().unwrap().to_owned(), (int(&r[1]), int(&r[2]))))
            .collect();
    assert_eq!(by_objects, expected, "objects grouped by class against histogram");
    let by_classes: BTreeMap<String, (u64, u64)> = rows(
        &[dump],
        "SELECT name, sum(instances), sum(shallow_bytes) FROM classes WHERE instances > 0 GROUP BY name",
        &[],
    )
    .into_iter()
    .map(|r| (r[0].as_str().unwrap().to_owned(), (int(&r[1]), int(&r[2]))))
    .collect();
    assert_eq!(by_classes, expected, "classes against histogram");
    let info = json(&["info", "--quiet", "--json", dump]);
    let counts = &rows(
        &[dump],
        "SELECT (SELECT count(*) FROM objects) AS o, (SELECT count(*) FROM refs) AS r, (SELECT sum(shallow_bytes) FROM objects WHERE reachable) AS l",
        &[],
    )[0];
    assert_eq!(int(&counts[0]), int(&info["objects"]));
    assert_eq!(int(&counts[1]), int(&info["references"]));
    // `reachable` is strong reachability: the dominator tree's live bytes (info's reachable
    // bytes follow weak references too).
    let dominators = json(&["dominators", "--quiet", "--json", "--top", "1", dump]);
    assert_eq!(int(&counts[2]), int(&dominators["live_bytes"]));
    let declared: u64 = info["roots"].as_array().unwrap().iter().map(|r| int(&r["count"])).sum();
    let roots = &rows(&[dump], "SELECT count(*) FROM roots WHERE kind <> 'static field'", &[])[0];
    assert_eq!(int(&roots[0]), declared, "roots against info");
}

/// The top of the dominator tree and the children of its biggest node, by SQL, equal
/// `leakscope dominators` (ids and retained sizes, in order).
pub fn assert_agrees_with_dominators(dump: &str) {
    let top = json(&["dominators", "--quiet", "--json", "--top", "15", dump]);
    let listed = |report: &Value| -> Vec<(String, u64)> {
        report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["id"].as_str().unwrap().to_owned(), int(&o["retained_bytes"])))
            .collect()
    };
    let hex = |r: Vec<Vec<Value>>| -> Vec<(String, u64)> { r.into_iter().map(|r| (id(&r[0]), int(&r[1]))).collect() };
    let query = "SELECT id, retained_bytes FROM objects WHERE reachable AND dominator IS NULL ORDER BY retained_bytes DESC, id LIMIT 15";
    let by_sql = hex(rows(&[dump], query, &[]));
    // Ties in retained size may list in another order: compare sizes in order, and ids as sets.
    let expected = listed(&top);
    assert_eq!(by_sql.iter().map(|r| r.1).collect::<Vec<_>>(), expected.iter().map(|r| r.1).collect::<Vec<_>>());
    let first = &expected[0].0;
    let children = json(&["dominators", "--quiet", "--json", "--top", "0", "--children", first, dump]);
    // An id is written in a query as the commands print it.
    let query =
        format!("SELECT id, retained_bytes FROM objects WHERE dominator = {first} ORDER BY retained_bytes DESC, id");
    let mut by_sql = hex(rows(&[dump], &query, &[]));
    let mut expected = listed(&children);
    by_sql.sort();
    expected.sort();
    assert_eq!(by_sql, expected, "children of {first}");
}

fn two_maps() -> (tempfile::TempDir, String) {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("TwoMaps", dir.path());
    let jvm = jdk.start_with_args(dir.path(), "TwoMaps", &["-Xmx256m"], &["5000"]);
    let path = dir.path().join("TwoMaps.hprof");
    jvm.jcmd(&["GC.heap_dump", path.to_str().unwrap()]);
    let p = path.to_str().unwrap().to_owned();
    (dir, p)
}

#[test]
fn sql_answers_what_the_commands_and_the_program_say() {
    let (_dir, dump) = two_maps();
    let d = dump.as_str();
    assert_agrees_with_histogram_and_info(d);
    assert_agrees_with_dominators(d);

    // The program made 5000 items, each in both maps.
    let items = rows(&[d], "SELECT count(*) FROM objects WHERE class = 'TwoMaps$Item'", &[]);
    assert_eq!(int(&items[0][0]), 5000);
    // MAT's "collections with a fill ratio": each map's size field and its table's length,
    // joined through the fields; Java sizes a HashMap of 5000 entries at 8192 buckets.
    let fill = rows(
        &[d],
        "SELECT r.static_field, CAST(s.value AS BIGINT) AS size, t.array_length \
         FROM roots r JOIN fields s ON s.object = r.object AND s.name = 'size' \
         JOIN fields tf ON tf.object = r.object AND tf.name = 'table' JOIN objects t ON t.id = tf.ref \
         WHERE r.kind = 'static field' AND r.static_field LIKE 'TwoMaps.BY_%' ORDER BY 1",
        &[],
    );
    let fill: Vec<(String, u64, u64)> =
        fill.iter().map(|r| (r[0].as_str().unwrap().to_owned(), int(&r[1]), int(&r[2]))).collect();
    assert_eq!(fill, [("TwoMaps.BY_ID".to_owned(), 5000, 8192), ("TwoMaps.BY_NAME".to_owned(), 5000, 8192)]);

    // A map's retained size by SQL equals `retained` of the same static field.
    let retained = json(&["retained", "--quiet", "--json", "--select", "static:TwoMaps.BY_ID", d]);
    let by_sql = rows(
        &[d],
        "SELECT o.retained_bytes, o.depth FROM roots r JOIN objects o ON o.id = r.object WHERE r.static_field = 'TwoMaps.BY_ID'",
        &[],
    );
    assert_eq!(int(&by_sql[0][0]), int(&retained["groups"][0]["retained_bytes"]));
    // Its depth is the length of its shortest path from a GC root, as `paths` shows it (a
    // system class's static names the application's main class, whose static holds the map).
    let paths = json(&["paths", "--quiet", "--json", "--select", "static:TwoMaps.BY_ID", d]);
    let steps = paths["paths"][0]["steps"].as_array().unwrap().len() as u64;
    assert_eq!(int(&by_sql[0][1]), steps - 1, "{paths}");

    // The table functions answer as the commands do.
    let hex = id(&rows(&[d], "SELECT object FROM roots WHERE static_field = 'TwoMaps.BY_ID'", &[])[0][0]);
    let children = json(&["dominators", "--quiet", "--json", "--top", "0", "--children", &hex, d]);
    let mut expected: Vec<(String, u64)> = children["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["id"].as_str().unwrap().to_owned(), int(&o["retained_bytes"])))
        .collect();
    let mut dominated: Vec<(String, u64)> =
        rows(&[d], &format!("SELECT id, retained_bytes FROM dominated({hex})"), &[])
            .iter()
            .map(|r| (id(&r[0]), int(&r[1])))
            .collect();
    expected.sort();
    dominated.sort();
    assert!(!expected.is_empty());
    assert_eq!(dominated, expected, "dominated() against dominators --children");
    let path: Vec<String> = rows(&[d], &format!("SELECT id FROM path_to_root('{hex}') ORDER BY step"), &[])
        .iter()
        .map(|r| id(&r[0]))
        .collect();
    let ids: Vec<String> =
        paths["paths"][0]["steps"].as_array().unwrap().iter().map(|st| st["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(path, ids, "path_to_root() against paths");
    let freed = &rows(&[d], "SELECT sum(shallow_bytes) FROM retained_set('static:TwoMaps.BY_ID')", &[])[0];
    assert_eq!(int(&freed[0]), int(&retained["groups"][0]["retained_bytes"]), "retained_set() against retained");
    // Freeing the items frees their payloads, but not their names: BY_NAME's keys hold those.
    let freed = "SELECT class, count(*) FROM retained_set('class:TwoMaps$Item') GROUP BY class ORDER BY 1";
    let freed: Vec<(String, u64)> =
        rows(&[d], freed, &[]).iter().map(|r| (r[0].as_str().unwrap().to_owned(), int(&r[1]))).collect();
    assert_eq!(freed, [("TwoMaps$Item".to_owned(), 5000), ("long[]".to_owned(), 5000)]);
    let maps = json(&["retained", "--quiet", "--json", "--select", "class:java.util.AbstractMap+", d]);
    let instances =
        &rows(&[d], "SELECT count(*), sum(shallow_bytes) FROM instances_of('java.util.AbstractMap', true)", &[])[0];
    assert_eq!(int(&instances[0]), int(&maps["groups"][0]["objects"]), "instances_of() against retained's selector");
    assert_eq!(int(&instances[1]), int(&maps["groups"][0]["shallow_bytes"]));
    let exact = "SELECT count(*) FROM instances_of('java.util.HashMap')";
    let histogram = "SELECT instances FROM classes WHERE name = 'java.util.HashMap'";
    assert_eq!(rows(&[d], exact, &[]), rows(&[d], histogram, &[]));

    // Strings' text only with --show-values (the program's names, not its "item-" constant).
    let names = "SELECT count(*) FROM objects WHERE class = 'java.lang.String' AND text ~ '^item-[0-9]+$'";
    assert_eq!(int(&rows(&[d], names, &["--show-values"])[0][0]), 5000);
    assert_eq!(int(&rows(&[d], names, &[])[0][0]), 0, "no text without --show-values");
    let field =
        "SELECT f.string FROM fields f WHERE f.class = 'TwoMaps$Item' AND f.name = 'name' AND f.string = 'item-42'";
    assert_eq!(rows(&[d], field, &["--show-values"]).len(), 1);

    // The same heap twice is a series of two: every table says which heap a row is from.
    let series = rows(&[d, d], "SELECT heap, instances FROM classes WHERE name = 'TwoMaps$Item' ORDER BY heap", &[]);
    assert_eq!(series, [vec![Value::from(1), Value::from(5000)], vec![Value::from(2), Value::from(5000)]]);
    let heaps = rows(&[d, d], "SELECT count(*), sum(objects) FROM heaps", &[]);
    let objects = int(&rows(&[d], "SELECT objects FROM heaps", &[])[0][0]);
    assert_eq!((int(&heaps[0][0]), int(&heaps[0][1])), (2, 2 * objects));
}

#[test]
fn sql_outputs_text_and_csv_and_refuses_bad_queries_in_one_line() {
    let dump = Path::new(crate::support::DEMO);
    let d = dump.to_str().unwrap();
    let q = "SELECT name, instances FROM classes WHERE instances > 0 ORDER BY name LIMIT 3";
    let text = leakscope(&["sql", "--quiet", d, q]);
    assert!(text.status.success(), "{}", String::from_utf8_lossy(&text.stderr));
    let text = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("name") && lines[0].ends_with("instances"), "{text}");
    assert!(lines[1].starts_with("----"), "{text}");
    assert_eq!(lines.last(), Some(&"(3 rows)"), "{text}");
    let csv = leakscope(&["sql", "--quiet", "--csv", d, q]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(csv.lines().next(), Some("name,instances"));
    assert_eq!(csv.lines().count(), 4, "{csv}");
    // Queries from standard input, separated by semicolons.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_leakscope"))
        .args(["sql", "--quiet", "--csv", d])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"SELECT 1 AS one;\nSELECT 'a;b' AS two\n").unwrap();
    let out = crate::support::wait_bounded(child, "sql from stdin");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "one\r\n1\r\ntwo\r\na;b\r\n");
    let bad_calls =
        ["SELECT * FROM dominated(5)", "SELECT * FROM retained_set('class:Nope')", "SELECT * FROM instances_of(1)"];
    for bad in ["SELECT nothing FROM objects", "SELEKT 1", "SELECT * FROM nowhere"].into_iter().chain(bad_calls) {
        let out = leakscope(&["sql", "--quiet", d, bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
    // Ids go in and come out as every other command writes them (`0x…`), bare or quoted,
    // under any alias; DESCRIBE names SQL's types, not Arrow's (issue 35).
    let top = json(&["dominators", "--quiet", "--json", "--top", "1", d]);
    let first = top["objects"][0]["id"].as_str().unwrap();
    for q in [
        format!("SELECT id AS x, class FROM objects WHERE id = {first}"),
        format!("SELECT id AS x, class FROM objects WHERE id = '{first}'"),
        format!("SELECT id AS x, class FROM objects WHERE id IN ({first}, 0x1)"),
    ] {
        let text = String::from_utf8(leakscope(&["sql", "--quiet", d, &q]).stdout).unwrap();
        let row: Vec<&str> = text.lines().nth(2).unwrap_or_default().split_whitespace().collect();
        assert_eq!(row, [first, top["objects"][0]["class"].as_str().unwrap()], "{q}: {text}");
    }
    let types = rows(&[d], "DESCRIBE objects", &[]);
    let types: BTreeMap<&str, &str> = types.iter().map(|r| (r[0].as_str().unwrap(), r[1].as_str().unwrap())).collect();
    assert_eq!((types["id"], types["class"], types["reachable"]), ("BIGINT UNSIGNED", "TEXT", "BOOLEAN"));
    let missing = leakscope(&["sql", "--quiet", "/nonexistent.hprof", "SELECT 1"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(Path::new(d).exists());
}
