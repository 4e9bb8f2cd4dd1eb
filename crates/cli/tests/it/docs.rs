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
fn the_architecture_page_shows_the_crate_graph_of_the_cargo_files() {
    assert_eq!(documented_graph(), cargo_graph(), "docs/architecture.md's crate table against crates/*/Cargo.toml");
}
