//! What tells the heaps of one JVM process from another's: the native handles of its threads
//! and its main class. A series judged as one program's growth must come from one process: a
//! restart empties every structure, and another program's heap shares nothing with it.
//!
//! Every platform thread's `java.lang.Thread` object holds `eetop`, the address of the VM's
//! own thread structure, set when the thread starts and kept while it lives. The JDK's
//! threads (`Reference Handler`, `Finalizer`, `Signal Dispatcher`, ...) live as long as the
//! process and get the same small Java ids (`tid`) in every process, but their structures sit
//! at other addresses in another process (another allocation, address space layout
//! randomisation). So two heaps that have a Java id in common are of one process when its
//! thread has the same handle in both, and of two when it does not.

use hprof::IdSize;

use crate::classes::{ClassIdx, ClassTable};
use crate::index::DumpIndex;

/// The process a heap dump came from, as far as the dump tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessMark {
    /// The live platform threads: Java id (`Thread.tid`) and native handle (`Thread.eetop`),
    /// sorted by id. Threads that have not started or have ended (handle 0) are left out.
    pub threads: Vec<(u64, u64)>,
    /// The class whose `main` method a thread's outermost frame runs, when one still does.
    pub main_class: Option<String>,
}

/// Where `Thread.tid` and `Thread.eetop` sit in the field values of each thread class's
/// instances (the dump lays out a class's own fields first, then its superclasses').
pub(crate) struct ThreadFields {
    at: Vec<Option<(usize, usize)>>,
}

impl ThreadFields {
    /// The offsets for every class of `classes` that is `java.lang.Thread` or extends it.
    pub(crate) fn new(classes: &ClassTable, id_size: IdSize) -> ThreadFields {
        let at = (0..classes.len() as u32).map(|c| offsets(classes, ClassIdx(c), id_size)).collect();
        ThreadFields { at }
    }

    /// The Java id and native handle of a thread instance of `class` with field `values`;
    /// `None` for other classes and for threads without a handle.
    pub(crate) fn read(&self, class: ClassIdx, values: &[u8]) -> Option<(u64, u64)> {
        let (tid, eetop) = (*self.at.get(class.index())?)?;
        let long = |at: usize| Some(u64::from_be_bytes(values.get(at..at + 8)?.try_into().ok()?));
        let native = long(eetop)?;
        (native != 0).then_some((long(tid)?, native))
    }
}

/// The offsets of `tid` and `eetop` in the values of `class`'s instances, when it is a thread
/// class whose `java.lang.Thread` declares both as longs.
fn offsets(classes: &ClassTable, class: ClassIdx, id_size: IdSize) -> Option<(usize, usize)> {
    let mut at = 0usize;
    for c in classes.chain(class) {
        let k = classes.get(c);
        if k.name == "java.lang.Thread" && k.loader_id == 0 {
            let mut tid = None;
            let mut eetop = None;
            for f in &k.fields {
                match (f.name.as_str(), f.ty) {
                    ("tid", hprof::BasicType::Long) => tid = Some(at),
                    ("eetop", hprof::BasicType::Long) => eetop = Some(at),
                    _ => {}
                }
                at += f.ty.dump_bytes(id_size);
            }
            return Some((tid?, eetop?));
        }
        at += k.fields.iter().map(|f| f.ty.dump_bytes(id_size)).sum::<usize>();
    }
    None
}

/// The class whose `main(String[])` a thread's outermost frame runs, from the dump's stack
/// traces (the one of the lowest trace serial, when several threads do).
pub(crate) fn main_class(ix: &DumpIndex<'_>) -> Option<String> {
    let text = |id: u64| ix.strings.get(&id).copied();
    let mut serials: Vec<&u32> = ix.traces.keys().collect();
    serials.sort_unstable();
    serials.into_iter().find_map(|serial| {
        let frame = ix.frames.get(ix.traces[serial].last()?)?;
        let is_main = text(frame.method_name_id)? == b"main" && text(frame.signature_id)? == b"([Ljava/lang/String;)V";
        let class = ix.class_serials.get(&frame.class_serial)?;
        let name = text(*ix.class_names.get(class)?)?;
        is_main.then(|| crate::names::java_name(name))
    })
}
