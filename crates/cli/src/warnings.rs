//! The warnings of the dumps a command read: printed as the reading meets them (by the progress
//! bar, which is how the application layer reports, or by the command), and kept for the
//! verdict printed at the end (`--json`'s `warnings` and `truncated_at`, the text's
//! `INCOMPLETE DUMP:` lines).

/// The warnings of the dumps one command read.
#[derive(Debug, Clone, Default)]
pub struct ReadWarnings {
    /// Each warning, as text.
    pub lines: Vec<String>,
    /// Where a truncated dump was cut.
    pub truncated_at: Option<u64>,
    /// Why each dump not read whole was not.
    pub incomplete: Vec<String>,
}

impl ReadWarnings {
    /// Prints the warnings of a read to stderr unless `quiet` (with `explain`, the
    /// known-harmless ones too, with why), and keeps them all.
    pub fn report(&mut self, w: &heap::Warnings, quiet: bool, explain: bool) {
        for item in w.items() {
            if !quiet {
                match item.harmless_because(w) {
                    None => eprintln!("warning: {item}"),
                    Some(why) if explain => eprintln!("note: {item}: {why}"),
                    Some(_) => {}
                }
            }
            self.lines.push(item.to_string());
            if item.kind == heap::WarningKind::Truncated {
                self.truncated_at = self.truncated_at.or(item.first_offset);
            }
        }
        if let Some(why) = analysis::incomplete(w) {
            self.incomplete.push(why);
        }
    }
}
