//! The snapshot's vocabulary: object indices, edges and their labels, roots, threads and
//! frames, and text as arrays hold it.

use hprof::Value;

use crate::classes::{ClassIdx, RefStrength};

/// Dense index of an object: its rank by address in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjIdx(pub u64);

impl ObjIdx {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An outgoing reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The referenced object.
    pub target: ObjIdx,
    /// Strong, or the strength of a `Reference.referent`.
    pub strength: RefStrength,
}

/// Where a reference comes from inside its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeLabel {
    /// An instance field, declared by `owner`.
    Field {
        /// Declaring class.
        owner: ClassIdx,
        /// Index in the owner's fields.
        field: u16,
    },
    /// An array element.
    Element(u64),
    /// A static field of the class this mirror represents.
    Static(u16),
    /// A class's superclass.
    Super,
    /// A class's defining loader.
    Loader,
}

/// A stack frame of a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Declaring class (Java name).
    pub class: String,
    /// Method name.
    pub method: String,
    /// Source file, if known.
    pub source_file: Option<String>,
    /// Line number, if known.
    pub line: Option<u32>,
}

/// A thread that holds roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// HPROF thread serial.
    pub serial: u32,
    /// The `java.lang.Thread` object, when the dump has it.
    pub object: Option<ObjIdx>,
    /// Its stack, innermost frame first.
    pub frames: Vec<Frame>,
}

/// One field of an object and its value ([`Snapshot::slots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The field's name.
    pub name: String,
    /// The class that declares it.
    pub declared_by: ClassIdx,
    /// A static field (of a class mirror).
    pub is_static: bool,
    /// Its value: an object id (0 for null), or a primitive's raw bits.
    pub value: Value,
}

/// What a thread's `java.lang.Thread` object says of it ([`Snapshot::thread_identity`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadIdentity {
    /// `Thread.name`, when the dump has it and it is not empty.
    pub name: Option<String>,
    /// `Thread.tid`, Java's thread id (`#24` in `jstack`).
    pub tid: Option<u64>,
    /// A virtual thread (JDK 21+).
    pub is_virtual: bool,
}

/// Details of a GC root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootDetail {
    /// Nothing more is known.
    None,
    /// Held by a thread (index into [`Snapshot::threads`]), at a frame depth when known.
    Thread {
        /// Index into [`Snapshot::threads`].
        thread: usize,
        /// Frame depth (0 = innermost), for frame-held roots.
        frame: Option<u32>,
    },
    /// A JNI global reference.
    JniGlobal {
        /// The global reference's id.
        ref_id: u64,
    },
}

/// A GC root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The rooted object.
    pub object: ObjIdx,
    /// The kind the dump declares.
    pub kind: hprof::RootKind,
    /// Thread, frame or JNI details.
    pub detail: RootDetail,
}

/// How a primitive array's bytes encode text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// One byte per character (a compact string's `byte[]` with coder 0).
    Latin1,
    /// UTF-16 units as the dump writes a `char[]`: big-endian.
    Utf16Be,
    /// UTF-16 units of a compact string's `byte[]` with coder 1: the VM's order, little-endian.
    Utf16Le,
}

/// An array's contents as text, at most `max_chars` characters; an unpaired surrogate reads
/// as U+FFFD.
pub fn decode_text(encoding: TextEncoding, data: &[u8], max_chars: usize) -> String {
    let utf16 = |unit: fn([u8; 2]) -> u16| -> String {
        let units = data.chunks_exact(2).map(|b| unit([b[0], b[1]]));
        char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).take(max_chars).collect()
    };
    match encoding {
        TextEncoding::Latin1 => data.iter().take(max_chars).map(|&b| char::from(b)).collect(),
        TextEncoding::Utf16Be => utf16(u16::from_be_bytes),
        TextEncoding::Utf16Le => utf16(u16::from_le_bytes),
    }
}

/// Objects per chunk of the parallel edge pass.
pub(crate) const CHUNK: usize = 1 << 16;

/// The value of [`super::Snapshot`]'s 2-byte size column for an object listed with the big
/// ones.
pub(super) const BIG_SIZE8: u64 = u16::MAX as u64;
