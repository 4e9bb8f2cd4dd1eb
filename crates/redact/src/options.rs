//! What a redaction replaces, and how.

use hprof::BasicType;

use crate::mask::Key;

/// How values are replaced.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Equality-preserving: each value by its image under a keyed permutation.
    Mask(Key),
    /// Every byte zero, as other tools do (equal lengths stay; all text becomes equal).
    Zero,
}

/// What to replace, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// How values are replaced.
    pub mode: Mode,
    /// Classes (exact Java names) and packages whose instances stay readable, with the
    /// strings and arrays their fields reference.
    pub keep: Vec<String>,
    /// Types of primitive fields (instance and static) replaced as well.
    pub fields: Vec<BasicType>,
    /// Thread names are masked too (by default they stay: analyses name threads by them).
    pub mask_thread_names: bool,
    /// With a key: the application's class, field and method names are replaced by
    /// pseudonyms under it (`--names`); the JDK's and known frameworks' stay.
    pub names: Option<Key>,
}
