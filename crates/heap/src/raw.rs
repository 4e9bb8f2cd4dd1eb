//! An object as one pass over a segment's records sees it, before the class table exists: the
//! words the scan, the census, the reference stream and the class graph share.

use hprof::BasicType;

/// An object's class as one segment's records name it, before the class table exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RawKind {
    /// An instance of the class with this id.
    Instance(u64),
    /// An object array of the class with this id.
    ObjArray(u64),
    /// A primitive array.
    PrimArray(BasicType),
}

/// An object's address and its file offset or kind word, as the scan keeps it.
pub(crate) type Pair = [u64; 2];
