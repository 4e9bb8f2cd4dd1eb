//! The documents that describe the code say what the code is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Each crate under `crates/` and the workspace crates its `[dependencies]` name.
fn cargo_graph() -> BTreeMap<String, BTreeSet<String>> {
    let crates = Path::new(ROOT).join("crates");
    let names: BTreeSet<String> = std::fs::read_dir(&crates)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names
        .iter()
        .map(|name| {
            let toml = std::fs::read_to_string(crates.join(name).join("Cargo.toml")).unwrap();
            let deps = toml
                .split("\n[")
                .find(|section| section.starts_with("dependencies]"))
                .unwrap_or("")
                .lines()
                .skip(1)
                .filter_map(|l| l.split(['.', ' ', '=']).next())
                .filter(|key| names.contains(*key))
                .map(str::to_owned)
                .collect();
            (name.clone(), deps)
        })
        .collect()
}

/// The crate table of `docs/architecture.md`: each crate and its "depends on" column.
fn documented_graph() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/architecture.md")).unwrap();
    let ticked = |cell: &str| -> BTreeSet<String> { cell.split('`').skip(1).step_by(2).map(str::to_owned).collect() };
    doc.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let name = cells.first()?.trim_start_matches("| ").trim_matches('`').to_owned();
            Some((name, ticked(cells.last()?)))
        })
        .filter(|(name, _)| Path::new(ROOT).join("crates").join(name).join("Cargo.toml").exists())
        .collect()
}

#[test]
fn the_rooms_keep_their_rules() {
    // scripts/check-rooms holds the code to docs/architecture.md's rules inside the crates:
    // no import circle, no file past 700 lines unnamed, lib.rs files as indexes, and
    // commands that only translate. It prints each breach on a line of its own.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/check-rooms"))
        .arg(&root)
        .output()
        .expect("python3 runs scripts/check-rooms");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.is_empty(),
        "scripts/check-rooms:\n{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_architecture_page_shows_the_crate_graph_of_the_cargo_files() {
    assert_eq!(documented_graph(), cargo_graph(), "docs/architecture.md's crate table against crates/*/Cargo.toml");
}

use crate::support::{leakscope, DEMO};

#[test]
fn the_json_schemas_in_docs_are_the_models_and_every_output_fits_its_schema() {
    let dir = Path::new(ROOT).join("docs/schemas");
    let write = std::env::var_os("LEAKSCOPE_WRITE_SCHEMAS").is_some();
    let mut schemas = BTreeMap::new();
    for (name, schema) in app::schemas::all() {
        let path = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            kept,
            text,
            "{} is not the schema of the models: run LEAKSCOPE_WRITE_SCHEMAS=1 cargo test",
            path.display()
        );
        schemas.insert(name, jsonschema::validator_for(&schema).expect("a valid schema"));
    }
    // The schemas say something: a document without its model's fields does not fit.
    assert!(!schemas["histogram"].is_valid(&serde_json::json!({"schema_version": 1})));
    assert!(!schemas["growth"].is_valid(&serde_json::json!({"schema_version": 1, "findings": "none"})));
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("demo.json");
    let summary_path = summary.to_str().unwrap();
    let top = crate::support::json(&["dominators", DEMO, "--json", "--quiet", "--top", "1"]);
    let top = top["objects"][0]["id"].as_str().unwrap().to_owned();
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("object", vec!["object", DEMO, &top]),
        ("histogram", vec!["histogram", DEMO]),
        ("info", vec!["info", DEMO]),
        ("dominators", vec!["dominators", DEMO]),
        ("retained", vec!["retained", DEMO, "--select", "class:SessionLeak$Session"]),
        ("paths", vec!["paths", DEMO, "--select", "class:SessionLeak$Session"]),
        ("roots", vec!["roots", DEMO]),
        ("group", vec!["group", DEMO, "--by", "package,class"]),
        ("suspects", vec!["suspects", DEMO]),
        ("growth", vec!["growth", DEMO, DEMO, DEMO]),
        ("diff", vec!["diff", DEMO, DEMO]),
        ("report", vec!["report", DEMO, DEMO, DEMO]),
        ("check", vec!["check", DEMO]),
        ("jvms", vec!["jvms"]),
        (
            "sql",
            vec![
                "sql",
                DEMO,
                "SELECT class, count(*), sum(retained_bytes) AS bytes, max(text) FROM objects GROUP BY class",
            ],
        ),
    ];
    for (name, args) in runs {
        let mut args = args;
        // jvms reads no dump, so it has no progress to quieten.
        args.extend(if name == "jvms" { &["--json"][..] } else { &["--json", "--quiet"] });
        let out = crate::support::leakscope(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["schema_version"], report::SCHEMA_VERSION, "{name}");
        let errors: Vec<String> =
            schemas[name].iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let out = crate::support::leakscope(&["summary", "--quiet", DEMO, "-o", summary_path]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], report::SCHEMA_VERSION);
    assert!(schemas["summary"].is_valid(&doc));
}

/// The `leakscope` examples of the guide's and the README's shell blocks, each as one line
/// (an example whose quoted SQL goes on over several lines joined into one), comments cut.
fn shell_examples() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for doc in ["docs/GUIDE.md", "README.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap();
        let mut in_shell = false;
        let mut open: Option<String> = None;
        for line in text.lines() {
            if line.starts_with("```") {
                in_shell = matches!(line.trim(), "```sh" | "```bash" | "```console" | "```shell");
                open = None;
                continue;
            }
            if !in_shell {
                continue;
            }
            let line = match open.take() {
                Some(start) => format!("{start} {}", line.trim()),
                None => match line.trim().strip_prefix("$ ").unwrap_or(line.trim()).strip_prefix("leakscope ") {
                    Some(rest) => format!("leakscope {rest}"),
                    None => continue,
                },
            };
            if line.matches('"').count() % 2 == 1 {
                open = Some(line);
                continue;
            }
            out.push((doc, line.split("  #").next().unwrap_or(&line).trim().to_string()));
        }
    }
    out
}

/// Every example that needs neither a JVM, a server, a run store nor an object id of the dump
/// it was written from runs on the bundled demo dump, in the order the documents give, in one
/// directory (so `secrets shared.hprof.gz` reads what the `redact` before it wrote), and ends
/// with exit 0 or 1 (1: it found what it looks for), never 2 (usage or input refused). Dumps
/// the examples name are the demo unless an earlier example wrote them.
#[test]
fn the_guides_examples_run_on_the_demo_dump() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("team.key"), "a passphrase long enough to key the masks").unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_leakscope")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let needs_more = |line: &str| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let command = words.get(1).copied().unwrap_or("");
        ["run", "attach", "top", "jvms", "mcp", "serve", "check"].contains(&command)
            || words.iter().any(|w| w.trim_matches(['"', '\'', ')']).ends_with(".db"))
            || line.contains("id:0x")
            || line.contains("path_to_root(")
            || words.iter().any(|w| w.len() > 6 && w.starts_with("0x"))
    };
    let mut ran = 0;
    for (doc, line) in shell_examples() {
        if needs_more(&line) {
            continue;
        }
        let mut after_output = false;
        let words: Vec<String> = line
            .split(' ')
            .map(|w| {
                let input = (w.ends_with(".hprof") || w.ends_with(".hprof.gz")) && !after_output;
                after_output = w == "-o" || w == "--output";
                if input && !dir.path().join(w).exists() {
                    crate::support::DEMO.to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let out = std::process::Command::new("bash")
            .args(["-c", &words.join(" ")])
            .current_dir(dir.path())
            .env("PATH", &path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{doc}: `{line}` exited {code:?} on the demo dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} examples ran: the documents' code blocks changed shape");
}

#[test]
fn the_guides_examples_use_commands_and_flags_the_binary_has() {
    // Every `leakscope ...` line of the guide's and the README's shell examples names a
    // command the binary has, with flags its --help lists: the manual cannot drift from the
    // binary without this failing. (Those that can run on the demo dump also run, in
    // `the_guides_examples_run_on_the_demo_dump`; the demo's two commands in their own tests.)
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for doc in ["docs/GUIDE.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let mut in_shell = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_shell = matches!(line.trim(), "```sh" | "```bash" | "```console" | "```shell");
                continue;
            }
            let line = line.split("  #").next().unwrap_or(line).trim();
            let Some(rest) = line.strip_prefix("leakscope ").or_else(|| line.strip_prefix("$ leakscope ")) else {
                continue;
            };
            if !in_shell {
                continue;
            }
            let words: Vec<&str> = rest.split_whitespace().collect();
            let Some(&command) = words.first().filter(|w| !w.starts_with('-')) else { continue };
            let help = leakscope(&[command, "--help"]);
            assert!(help.status.success(), "{doc}: `leakscope {command}` is no command of the binary: {line}");
            let help = String::from_utf8_lossy(&help.stdout);
            for flag in words.iter().filter(|w| w.starts_with("--")) {
                let flag = flag.split('=').next().unwrap().trim_end_matches(['"', '\'', ',', ')']);
                assert!(help.contains(flag), "{doc}: `leakscope {command}` has no {flag}: {line}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} examples found: the guide's code blocks changed shape");
}

#[test]
fn help_says_each_default_once() {
    // clap prints `[default: N]` after an option's own words: a "(default N)" in those words
    // said it twice ("(default 10) [default: 10]").
    let help = leakscope(&["help"]);
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    let commands: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 20, "commands not found in `leakscope help`:\n{text}");
    for command in commands {
        let out = leakscope(&[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        // One block per option: its flag line and the lines of words below it.
        let mut blocks: Vec<String> = Vec::new();
        for line in help.lines() {
            if line.trim_start().starts_with('-') || blocks.is_empty() {
                blocks.push(String::new());
            }
            let block = blocks.last_mut().unwrap();
            block.push_str(line);
            block.push(' ');
        }
        for b in blocks {
            assert!(
                !(b.contains("(default") && b.contains("[default:")),
                "`{command} --help` says a default twice: {b}"
            );
        }
    }
}
