//! The class-file rewriter on inputs the fuzzer found: each gives an error or a class, never
//! a panic.

use leakscope_agent::instrument::{add_entry_hooks, LEAKSCOPE_HOOK};

#[test]
fn fuzz_findings_are_errors_not_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let hook = LEAKSCOPE_HOOK;
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "class") {
            let bytes = std::fs::read(&path).unwrap();
            let _ = add_entry_hooks(&bytes, hook);
            n += 1;
        }
    }
    assert!(n > 0, "no regression inputs found");
}
