//! Writes HPROF heap dumps from a declarative description, so that analysis tests build
//! exact heaps in a few lines (in the spirit of Shark's `dump { }` test DSL).
//!
//! Objects get addresses packed one after another with their true JVM sizes under the
//! chosen [`heap::VmLayout`], exactly as a live heap looks after a full GC, so that the
//! reader's layout inference sees what it sees in real dumps.
//!
//! ```
//! use testkit::{HeapBuilder, Ty};
//! let mut h = HeapBuilder::new();
//! let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("value", Ty::Int)]);
//! let a = h.instance(node);
//! let b = h.instance(node);
//! h.set(a, "next", b);
//! h.set_prim(b, "value", 42);
//! h.root(hprof::RootKind::JniGlobal, a);
//! let bytes: Vec<u8> = h.build();
//! assert!(bytes.starts_with(b"JAVA PROFILE 1.0.2"));
//! ```

mod builder;
pub mod scale;

pub use builder::{ClassRef, HeapBuilder, ObjRef, ThreadRef};
/// Field and element types.
pub use hprof::BasicType as Ty;
