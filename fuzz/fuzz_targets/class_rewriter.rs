//! Feeds arbitrary bytes to the agent's class-file rewriter (the method-entry hooks of
//! staleness watching), which runs inside the JVM on every class a watched rule names.
//! Any panic, hang or oversized allocation is a finding; a rewritten class must parse again.
#![no_main]

use agent::instrument::{add_entry_hooks, Hook, LEAKSCOPE_HOOK};
use libfuzzer_sys::fuzz_target;

const HOOK: Hook<'static> = LEAKSCOPE_HOOK;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((rewritten, _))) = add_entry_hooks(data, HOOK) {
        // The output is a class file too: rewriting it again must not fail on its structure.
        let _ = add_entry_hooks(&rewritten, Hook { class: "io/leakscope/Other", entry: "touched", created: "made" });
    }
});
