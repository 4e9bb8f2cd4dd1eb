//! Sharing a dump: `secrets` against a program that plants 20 credentials among 200 decoys
//! (JDK 17 and 25), and `redact` against the analyses themselves: on Tomcat's heaps
//! (`apps.rs`) histogram, dominators, suspects and growth are the same before and after, and
//! VisualVM's heap library (Debian's `visualvm`) reads the copy with the same counts.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{json, leakscope, missing, on_jdk17_and_jdk25, Jdk};

/// Runs `leakscope ARGS` and asserts its exit code; its stdout as JSON when it has any.
fn run(args: &[&str], code: i32) -> Value {
    let out = leakscope(args);
    assert_eq!(out.status.code(), Some(code), "leakscope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Whether a finding's shortest path passes through the static field `field`.
fn held_by_static(f: &Value, field: &str) -> bool {
    f["path"]["steps"].as_array().is_some_and(|s| s.iter().any(|s| s["field"] == format!("static {field}")))
}

fn planted_credentials_are_found_and_redaction_removes_them(jdk: &Jdk) {
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("Secrets", dir.path());
    let jvm = jdk.start(dir.path(), "Secrets", &["-Xmx128m"]);
    let dump = dir.path().join("secrets.hprof");
    jvm.jcmd(&["GC.heap_dump", dump.to_str().unwrap()]);
    drop(jvm);
    let dump = dump.to_str().unwrap();

    let report = run(&["secrets", "--quiet", "--json", dump], 1);
    let findings = report["findings"].as_array().unwrap();
    let planted: Vec<&Value> = findings.iter().filter(|f| held_by_static(f, "PLANTED")).collect();
    let decoys: Vec<&Value> = findings.iter().filter(|f| held_by_static(f, "DECOYS")).collect();
    let mut kinds: Vec<&str> = planted.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "aws-access-key",
            "aws-access-key",
            "basic-auth",
            "bearer-token",
            "card-number",
            "card-number",
            "github-token",
            "github-token",
            "gitlab-token",
            "google-api-key",
            "jwt",
            "jwt",
            "jwt",
            "npm-token",
            "private-key",
            "private-key",
            "slack-token",
            "stripe-key",
            "url-password",
            "url-password",
        ],
        "{report:#}"
    );
    let objects: std::collections::HashSet<&str> = planted.iter().map(|f| f["object"].as_str().unwrap()).collect();
    assert_eq!(objects.len(), 20, "one finding per planted object");
    assert!(decoys.len() <= 2, "decoys flagged: {decoys:#?}");
    assert_eq!(findings.len(), planted.len() + decoys.len(), "nothing else in the program is a credential: {report:#}");
    // What holds each: the list's array slot, or the Config object's field.
    let config = planted.iter().find(|f| f["owner"]["field"] == "jdbcUrl").expect("the JDBC URL in Config.jdbcUrl");
    assert_eq!(config["owner"]["class"], "Secrets$Config");
    assert!(planted.iter().filter(|f| f["owner"]["class"] == "java.lang.Object[]").count() == 19);
    // Excerpts never hold the whole secret: the planted PEM body and JWT signature are long.
    for f in &planted {
        let e = f["excerpt"].as_str().unwrap();
        assert!(e.contains("***"), "{e}");
    }
    assert!(planted.iter().any(|f| f["encoding"] == "utf-16") && planted.iter().any(|f| f["encoding"] == "utf-8"));

    // Masked, zeroed, gzip or not: nothing left at the default confidence.
    let key = dir.path().join("key");
    std::fs::write(&key, b"a key file of more than sixteen bytes").unwrap();
    let (masked, zeroed) = (dir.path().join("masked.hprof"), dir.path().join("zeroed.hprof.gz"));
    run(&["redact", "--quiet", dump, "-o", masked.to_str().unwrap(), "--key-file", key.to_str().unwrap()], 0);
    run(&["redact", "--quiet", dump, "-o", zeroed.to_str().unwrap(), "--zero"], 0);
    for copy in [&masked, &zeroed] {
        let after = run(&["secrets", "--quiet", "--json", copy.to_str().unwrap()], 0);
        assert_eq!(after["findings"], serde_json::json!([]), "{}", copy.display());
        assert_eq!(after["texts_searched"], report["texts_searched"]);
    }
    // A password that only the code holds is in the symbol table, which the copies leave out.
    let literal: &[u8] = b"literal-only-Fallback-Passw0rd-4c1d";
    assert!(contains(&std::fs::read(dump).unwrap(), literal), "the literal is among the dump's symbols");
    assert!(!contains(&std::fs::read(&masked).unwrap(), literal), "the literal is left out of the copy");

    // --names: the application's names are pseudonyms, the mapping gives them back.
    let (named, map) = (dir.path().join("named.hprof"), dir.path().join("names.json"));
    let (named, map) = (named.to_str().unwrap(), map.to_str().unwrap());
    let r = run(&["redact", "--quiet", "--json", dump, "-o", named, "--names", "--names-map", map, "--zero"], 0);
    assert!(r["pseudonyms"].as_u64().unwrap() >= 5, "{r}");
    let bytes = std::fs::read(named).unwrap();
    for name in ["Secrets$Config", "Secrets.java", "jdbcUrl", "PLANTED", "fallbackPassword"] {
        assert!(!contains(&bytes, name.as_bytes()), "{name} is in the copy");
    }
    let map = names_map(map);
    for name in ["Secrets", "Config", "jdbcUrl", "PLANTED", "DECOYS"] {
        assert!(map.values().any(|v| v == name), "{name} has no pseudonym: {map:?}");
    }
    assert!(contains(&bytes, b"java/util/ArrayList"), "JDK names stay");
    let of = |d: &str| json(&["histogram", "--quiet", "--json", "--top", "0", d]);
    assert_eq!(unnamed(of(named), &map), of(dump));
    assert_eq!(run(&["secrets", "--quiet", "--json", named], 0)["findings"], serde_json::json!([]));

    // --keep leaves a class's strings readable, and so its credential.
    let kept = dir.path().join("kept.hprof");
    run(&["redact", "--quiet", dump, "-o", kept.to_str().unwrap(), "--keep", "Secrets$Config"], 0);
    let after = run(&["secrets", "--quiet", "--json", kept.to_str().unwrap()], 1);
    let left: Vec<&Value> = after["findings"].as_array().unwrap().iter().collect();
    assert!(left.iter().all(|f| f["owner"]["field"] == "jdbcUrl"), "{left:#?}");
    assert!(left.iter().any(|f| f["owner"]["field"] == "jdbcUrl"), "{left:#?}");
}

on_jdk17_and_jdk25!(planted_credentials_are_found_and_redaction_removes_them);

/// `v` without file offsets in its text ("first at offset 23134515"): the copy leaves out
/// the symbols nothing references, so what follows them moves up.
fn without_offsets(v: Value) -> Value {
    let re = regex::Regex::new(r"offset \d+").unwrap();
    map_strings(v, &|s| re.replace_all(s, "offset _").into_owned())
}

/// `v` with `f` applied to every string in it.
fn map_strings(v: Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, map_strings(x, f))).collect()),
        other => other,
    }
}

/// Equal but for the order of rows that tie on every number and differ in names, which
/// sort otherwise under pseudonyms: the same rows, and the same numbers in the same order.
fn assert_same_modulo_ties(a: Value, b: Value, what: &str) {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Array(a) => {
                let mut a: Vec<Value> = a.into_iter().map(sorted).collect();
                a.sort_by_key(|x| x.to_string());
                Value::Array(a)
            }
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, sorted(x))).collect()),
            other => other,
        }
    }
    let numbers = |v: &Value| map_strings(v.clone(), &|_| String::new());
    assert_eq!(numbers(&a), numbers(&b), "{what}: the numbers in order");
    assert_eq!(sorted(a), sorted(b), "{what}: the rows");
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The mapping `redact --names-map` wrote: pseudonym → name, and for each masked thread
/// name `thread "MASKED"` → `thread "NAME"`, as outputs name a thread.
fn names_map(path: &str) -> std::collections::HashMap<String, String> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let strings = |key: &str| -> Vec<(String, String)> {
        let map = doc[key].as_object().unwrap_or_else(|| panic!("a {key} object"));
        map.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())).collect()
    };
    // Quoted as reports quote a thread's name (`report::thread_label`), escapes included: a
    // masked name can hold a backslash or a quote.
    let threads = strings("thread_names").into_iter().map(|(k, v)| (format!("thread {k:?}"), format!("thread {v:?}")));
    strings("pseudonyms").into_iter().chain(threads).collect()
}

/// `v` with every masked thread name and pseudonym of `map` in its strings replaced by the
/// name it stands for.
fn unnamed(v: Value, map: &std::collections::HashMap<String, String>) -> Value {
    let re = regex::Regex::new(r"\b[Cn][a-z2-7]{10}\b").unwrap();
    map_strings(v, &|s| {
        let mut s = s.to_owned();
        for (masked, name) in map.iter().filter(|(k, _)| k.starts_with("thread \"")) {
            s = s.replace(masked.as_str(), name);
        }
        re.replace_all(&s, |c: &regex::Captures<'_>| map.get(&c[0]).cloned().unwrap_or(c[0].to_owned())).into_owned()
    })
}

/// Duplicate strings: how many distinct texts occur more than once, and in how many strings.
/// Only strings shorter than the 200 characters `sql` shows: two longer ones that share their
/// first 200 are one text to `sql` and two values to the masks (a JDK 25 Tomcat heap in CI
/// read 3,940 texts in 13,493 strings, and 3,939 in 13,491 after `redact`).
fn duplicate_strings(dump: &str) -> Vec<Value> {
    let q = "SELECT count(*), sum(n) FROM (SELECT text, count(*) AS n FROM objects \
             WHERE class = 'java.lang.String' AND character_length(text) < 200 GROUP BY text HAVING count(*) > 1)";
    crate::sql::rows(&[dump], q, &["--show-values"]).remove(0)
}

/// `growth --json` without the inputs' file names.
fn growth_without_names(dumps: &[PathBuf]) -> Value {
    let mut args = vec!["growth", "--quiet", "--json"];
    args.extend(dumps.iter().map(|p| p.to_str().unwrap()));
    let mut doc = run(&args, 0);
    strip(&mut doc, &dumps.iter().map(|p| p.display().to_string()).collect::<Vec<_>>());
    doc
}

/// Replaces the given file names by their position wherever a string value holds one.
fn strip(v: &mut Value, names: &[String]) {
    match v {
        Value::String(s) => {
            for (i, n) in names.iter().enumerate() {
                if s.contains(n.as_str()) {
                    *s = s.replace(n.as_str(), &format!("<input {i}>"));
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, names)),
        Value::Object(o) => o.values_mut().for_each(|x| strip(x, names)),
        _ => {}
    }
}

/// What VisualVM's heap library counts in a dump (instances, bytes, classes, strings), or
/// `None` with a [`missing`] note when Debian's `visualvm` is not installed.
fn visualvm_counts(jdk: &Jdk, dump: &Path, work: &Path) -> Option<String> {
    let modules = Path::new("/usr/share/visualvm/visualvm/modules");
    let heap_jar = modules.join("org-graalvm-visualvm-lib-jfluid-heap.jar");
    if !heap_jar.exists() {
        missing("VisualVM's heap library (Debian's visualvm package)");
        return None;
    }
    let lib = Path::new("/usr/share/visualvm/platform/lib");
    let cp = format!(
        "{}:{}:{}:{}",
        work.display(),
        heap_jar.display(),
        lib.join("org-openide-util-lookup.jar").display(),
        lib.join("org-openide-util.jar").display()
    );
    if !work.join("VisualVmCount.class").exists() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/tools/VisualVmCount.java");
        let ok = jdk.tool("javac").args(["-cp", &cp, "-d"]).arg(work).arg(&src).status().unwrap();
        assert!(ok.success(), "javac VisualVmCount");
    }
    let out = Command::new(jdk.bin.join("java")).args(["-cp", &cp, "VisualVmCount"]).arg(dump).output().unwrap();
    assert!(out.status.success(), "VisualVM on {}: {}", dump.display(), String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A series of real heaps (Tomcat's), redacted with one key: every analysis gives the same
/// answer on the copies, duplicate strings stay duplicates (and collapse when zeroed),
/// nothing is left for `secrets`, and VisualVM reads a copy with the original's counts.
pub fn assert_redaction_keeps_the_analysis(jdk: &Jdk, dumps: &[PathBuf]) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, b"the same key for the whole series").unwrap();
    let copies: Vec<PathBuf> = dumps
        .iter()
        .enumerate()
        .map(|(i, d)| {
            // The last copy gzip-compressed: every command reads it as it is.
            let out = dir.path().join(format!("redacted-{i}.hprof{}", if i + 1 == dumps.len() { ".gz" } else { "" }));
            let args = ["redact", "--quiet", "--json", d.to_str().unwrap(), "-o", out.to_str().unwrap(), "--key-file"];
            let r = run(&[&args[..], &[key.to_str().unwrap()]].concat(), 0);
            assert!(r["arrays"].as_u64().unwrap() > 1000, "{r}");
            out
        })
        .collect();
    let (last, copy) = (dumps.last().unwrap().to_str().unwrap(), copies.last().unwrap().to_str().unwrap());
    for command in [&["histogram", "--top", "0"][..], &["dominators", "--top", "50"], &["suspects"]] {
        let of = |d: &str| json(&[command, &["--quiet", "--json", d]].concat());
        assert_eq!(without_offsets(of(last)), without_offsets(of(copy)), "{command:?}");
    }
    assert_eq!(growth_without_names(dumps), growth_without_names(&copies));

    let before = duplicate_strings(last);
    assert_eq!(duplicate_strings(copy), before, "duplicate strings: [texts, strings]");
    let zeroed = dir.path().join("zeroed.hprof");
    run(&["redact", "--quiet", last, "-o", zeroed.to_str().unwrap(), "--zero"], 0);
    let after_zero = duplicate_strings(zeroed.to_str().unwrap());
    assert!(after_zero[1].as_u64() > before[1].as_u64(), "zeroed: {after_zero:?}, before: {before:?}");

    run(&["secrets", "--quiet", copy], 0);

    // --names with the same key: the same pseudonyms in every copy, and through the mapping
    // the same answers (Tomcat's own names stay: the analyses know its frames by them).
    let mut map = std::collections::HashMap::new();
    let named: Vec<PathBuf> = dumps
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (out, names) =
                (dir.path().join(format!("named-{i}.hprof")), dir.path().join(format!("names-{i}.json")));
            let (o, n, k) = (out.to_str().unwrap(), names.to_str().unwrap(), key.to_str().unwrap());
            run(&["redact", "--quiet", d.to_str().unwrap(), "-o", o, "--key-file", k, "--names", "--names-map", n], 0);
            for (pseudonym, name) in names_map(n) {
                let before = map.insert(pseudonym.clone(), name.clone());
                assert!(before.as_ref().is_none_or(|b| *b == name), "{pseudonym} stands for {name} and {before:?}");
            }
            out
        })
        .collect();
    assert!(map.values().any(|n| n == "Audit"), "the application's class has a pseudonym: {map:?}");
    let named_last = named.last().unwrap().to_str().unwrap();
    for command in [&["histogram", "--top", "0"][..], &["dominators", "--top", "50"], &["suspects"]] {
        let of = |d: &str| without_offsets(json(&[command, &["--quiet", "--json", d]].concat()));
        assert_same_modulo_ties(unnamed(of(named_last), &map), of(last), &format!("{command:?} with --names"));
    }
    let growth = unnamed(growth_without_names(&named), &map);
    assert_same_modulo_ties(growth, growth_without_names(dumps), "growth with --names");

    if let Some(original) = visualvm_counts(jdk, &dumps[0], dir.path()) {
        assert!(original.contains("instances "), "{original}");
        assert_eq!(visualvm_counts(jdk, &copies[0], dir.path()).unwrap(), original);
        assert_eq!(visualvm_counts(jdk, &named[0], dir.path()).unwrap(), original, "with --names");
    }
}
