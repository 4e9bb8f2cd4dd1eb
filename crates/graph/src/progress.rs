//! Where long loops report how far they are; the binary draws it, libraries never print.

/// Receives progress of long phases. Implementations must be cheap: callers report at most
/// every few thousand items.
pub trait Progress: Sync {
    /// A new phase starts, with `total` units of work (bytes or items).
    fn start(&self, phase: &str, total: u64);
    /// `done` more units finished in the current phase.
    fn advance(&self, done: u64);
    /// The current phase is over.
    fn finish(&self) {}
}

/// Ignores progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
}
