//! The warnings of the dumps a command read: printed as the reading meets them (by the progress
//! bar or the command), and kept for the verdict printed at the end (`--json`'s `warnings` and
//! `truncated_at`, the text's `INCOMPLETE DUMP:` lines).

/// The warnings of the dumps this command read (text, where a truncated one was cut, and why
/// each dump not read whole was not); `None` when it read none.
pub type ReadWarnings = (Vec<String>, Option<u64>, Vec<String>);
static READ_WARNINGS: std::sync::Mutex<Option<ReadWarnings>> = std::sync::Mutex::new(None);

/// What was kept of the warnings so far; `None` when no dump was read.
pub fn read() -> Option<ReadWarnings> {
    READ_WARNINGS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Prints warnings of a read to stderr unless `quiet` (with `explain`, the known-harmless
/// ones too, with why), and keeps them all for the `--json` output.
pub fn report(w: &heap::Warnings, quiet: bool, explain: bool) {
    let mut kept = READ_WARNINGS.lock().unwrap_or_else(|e| e.into_inner());
    let kept = kept.get_or_insert_with(Default::default);
    for item in w.items() {
        if !quiet {
            match item.harmless_because(w) {
                None => eprintln!("warning: {item}"),
                Some(why) if explain => eprintln!("note: {item}: {why}"),
                Some(_) => {}
            }
        }
        kept.0.push(item.to_string());
        if item.kind == heap::WarningKind::Truncated {
            kept.1 = kept.1.or(item.first_offset);
        }
    }
    if let Some(why) = analysis::incomplete(w) {
        kept.2.push(why);
    }
}
