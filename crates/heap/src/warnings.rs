//! Recoverable problems, counted by kind rather than aborting the analysis.

use std::fmt;

/// What kind of problem was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WarningKind {
    /// The file ends inside a record: the tail was cut (a JVM killed while dumping).
    Truncated,
    /// A sub-record could not be read; the rest of its segment was skipped.
    UnreadableSegmentTail,
    /// A top-level record with a tag this reader does not know, skipped by its length.
    UnknownRecord,
    /// A reference to an id that is no object in the dump; treated as null.
    DanglingReference,
    /// A GC root naming no object in the dump; ignored.
    DanglingRoot,
    /// Two objects or classes with the same id; the first was kept.
    DuplicateId,
    /// An instance whose field bytes do not match its class's field list.
    FieldLengthMismatch,
    /// An instance or array of a class the dump does not define.
    UnknownClass,
    /// A class whose superclass chain loops.
    SuperclassCycle,
    /// The file holds several heap dumps (the old hprof agent appends one per request); one is read.
    SeveralDumps,
    /// Object ids are sequence numbers, not addresses: sizes come from the class layout.
    IdsNotAddresses,
}

/// One kind of warning: how many times it happened, and where first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The kind.
    pub kind: WarningKind,
    /// How many times.
    pub count: u64,
    /// Byte offset of the first occurrence, when known.
    pub first_offset: Option<u64>,
    /// Detail about the first occurrence.
    pub detail: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (one, many) = match self.kind {
            WarningKind::Truncated => ("the dump is truncated; what follows the cut was not read", ""),
            WarningKind::UnreadableSegmentTail => (
                "unreadable heap data skipped to the end of its segment",
                "segments with unreadable heap data skipped to their end",
            ),
            WarningKind::UnknownRecord => ("record with an unknown tag skipped", "records with unknown tags skipped"),
            WarningKind::DanglingReference => (
                "reference points to no object in the dump (treated as null)",
                "references point to no object in the dump (treated as null)",
            ),
            WarningKind::DanglingRoot => {
                ("GC root names no object in the dump (ignored)", "GC roots name no object in the dump (ignored)")
            }
            WarningKind::DuplicateId => {
                ("object shares its id with another (first kept)", "objects share an id with another (first kept)")
            }
            WarningKind::FieldLengthMismatch => {
                ("instance's field bytes do not match its class", "instances' field bytes do not match their class")
            }
            WarningKind::UnknownClass => {
                ("object of a class the dump does not define", "objects of classes the dump does not define")
            }
            WarningKind::SuperclassCycle => {
                ("class's superclass chain loops (chain cut)", "classes' superclass chains loop (chains cut)")
            }
            WarningKind::SeveralDumps => ("heap dump in the file", "heap dumps in the file"),
            WarningKind::IdsNotAddresses => ("object ids are sequence numbers, not addresses", ""),
        };
        match (self.count, many) {
            (_, "") => write!(f, "{one}")?,
            (1, _) => write!(f, "1 {one}")?,
            (n, _) => write!(f, "{n} {many}")?,
        }
        if let Some(o) = self.first_offset {
            write!(f, "; {} at offset {o}", if self.count > 1 { "first" } else { "found" })?;
        }
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

/// Warnings gathered while reading, at most one entry per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Warnings {
    items: Vec<Warning>,
}

impl Warnings {
    /// Counts `n` occurrences of `kind`; the first one's offset and detail are kept.
    pub fn add(&mut self, kind: WarningKind, n: u64, offset: Option<u64>, detail: impl FnOnce() -> String) {
        if n == 0 {
            return;
        }
        match self.items.iter_mut().find(|w| w.kind == kind) {
            Some(w) => {
                w.count += n;
                if w.first_offset.is_none() || offset.is_some_and(|o| Some(o) < w.first_offset) {
                    (w.first_offset, w.detail) = (offset, detail());
                }
            }
            None => self.items.push(Warning { kind, count: n, first_offset: offset, detail: detail() }),
        }
    }

    /// Folds `other` into these.
    pub fn merge(&mut self, other: Warnings) {
        for w in other.items {
            let detail = w.detail;
            self.add(w.kind, w.count, w.first_offset, || detail);
        }
    }

    /// The warnings, in a stable order.
    pub fn items(&self) -> Vec<&Warning> {
        let mut v: Vec<_> = self.items.iter().collect();
        v.sort_by_key(|w| w.kind);
        v
    }

    /// True when nothing was skipped.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Count of one kind.
    pub fn count(&self, kind: WarningKind) -> u64 {
        self.items.iter().find(|w| w.kind == kind).map_or(0, |w| w.count)
    }

    /// The warnings worth printing on every command: all but the known-harmless ones
    /// ([`Warning::harmless_because`]), which `info` explains once.
    pub fn worth_repeating(&self) -> Vec<&Warning> {
        self.items().into_iter().filter(|w| w.harmless_because(self).is_none()).collect()
    }

    /// True when no record was cut or skipped: what the dump names is all there.
    fn whole(&self) -> bool {
        [WarningKind::Truncated, WarningKind::UnreadableSegmentTail, WarningKind::FieldLengthMismatch]
            .iter()
            .all(|&k| self.count(k) == 0)
    }
}

impl Warning {
    /// Why this warning changes nothing a report says, when it is one of the known-harmless
    /// cases: references to objects a whole dump leaves out. JDK 17's and 25's dumps with G1 or
    /// Serial always have some (811 and 949 in a small program's dumps, on JDK 17 all from one
    /// JNI-global `Object[]` in the class-data-sharing archive's address range, naming archived
    /// objects no code has used); read as null they leave every count, size and path as the
    /// VM's own walk sees it.
    /// In a dump with cut or skipped records they may be lost data instead, so they stay.
    pub fn harmless_because(&self, all: &Warnings) -> Option<&'static str> {
        (self.kind == WarningKind::DanglingReference && all.whole()).then_some(
            "the dump leaves those objects out (HotSpot with G1 or Serial leaves out class-data-sharing archive \
             objects no code has used); read as null, they change no count, size or path",
        )
    }
}
