//! Heap dump sub-records: roots, class dumps, instances, arrays.

use crate::cursor::{Cursor, IdSize, Short};
use crate::error::{Error, Result};
use crate::layout::{
    ClassDumpHead, HeapDumpInfo, InstanceHead, ObjArrayHead, PrimArrayHead, RootFrame, RootId, RootJniGlobal,
    RootThread, RootThreadObject,
};
use crate::record::IdList;
use crate::types::{sub, BasicType, RootKind};
use crate::writer::Writer;

/// A GC root declared by the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The kind of root.
    pub kind: RootKind,
    /// The rooted object.
    pub object_id: u64,
    /// The thread holding it, for thread-related roots.
    pub thread_serial: Option<u32>,
    /// The frame depth in that thread's stack trace, for frame roots (`u32::MAX` when unknown).
    pub frame: Option<u32>,
    /// The stack trace serial, for thread objects.
    pub stack_serial: Option<u32>,
    /// The JNI global reference id, for JNI globals.
    pub ref_id: Option<u64>,
}

/// The shape of a root sub-record's body.
#[derive(Clone, Copy)]
enum Shape {
    Id,
    JniGlobal,
    Frame,
    Thread,
    ThreadObject,
}

/// Root tags, their kinds and their layouts: one table serves reading and writing.
const ROOTS: [(u8, RootKind, Shape); 16] = [
    (sub::ROOT_UNKNOWN, RootKind::Unknown, Shape::Id),
    (sub::ROOT_JNI_GLOBAL, RootKind::JniGlobal, Shape::JniGlobal),
    (sub::ROOT_JNI_LOCAL, RootKind::JniLocal, Shape::Frame),
    (sub::ROOT_JAVA_FRAME, RootKind::JavaFrame, Shape::Frame),
    (sub::ROOT_NATIVE_STACK, RootKind::NativeStack, Shape::Thread),
    (sub::ROOT_STICKY_CLASS, RootKind::StickyClass, Shape::Id),
    (sub::ROOT_THREAD_BLOCK, RootKind::ThreadBlock, Shape::Thread),
    (sub::ROOT_MONITOR_USED, RootKind::MonitorUsed, Shape::Id),
    (sub::ROOT_THREAD_OBJECT, RootKind::ThreadObject, Shape::ThreadObject),
    (sub::ROOT_INTERNED_STRING, RootKind::InternedString, Shape::Id),
    (sub::ROOT_FINALIZING, RootKind::Finalizing, Shape::Id),
    (sub::ROOT_DEBUGGER, RootKind::Debugger, Shape::Id),
    (sub::ROOT_REFERENCE_CLEANUP, RootKind::ReferenceCleanup, Shape::Id),
    (sub::ROOT_VM_INTERNAL, RootKind::VmInternal, Shape::Id),
    (sub::ROOT_JNI_MONITOR, RootKind::JniMonitor, Shape::Frame),
    (sub::ROOT_UNREACHABLE, RootKind::Unreachable, Shape::Id),
];

fn root_shape(tag: u8) -> Option<(RootKind, Shape)> {
    ROOTS.iter().find(|r| r.0 == tag).map(|r| (r.1, r.2))
}

impl Root {
    fn read(kind: RootKind, shape: Shape, c: &mut Cursor<'_>) -> std::result::Result<Root, Short> {
        let mut r = Root { kind, object_id: 0, thread_serial: None, frame: None, stack_serial: None, ref_id: None };
        match shape {
            Shape::Id => r.object_id = RootId::read(c)?.object_id,
            Shape::JniGlobal => {
                let g = RootJniGlobal::read(c)?;
                (r.object_id, r.ref_id) = (g.object_id, Some(g.ref_id));
            }
            Shape::Frame => {
                let f = RootFrame::read(c)?;
                (r.object_id, r.thread_serial, r.frame) = (f.object_id, Some(f.thread_serial), Some(f.frame));
            }
            Shape::Thread => {
                let t = RootThread::read(c)?;
                (r.object_id, r.thread_serial) = (t.object_id, Some(t.thread_serial));
            }
            Shape::ThreadObject => {
                let t = RootThreadObject::read(c)?;
                (r.object_id, r.thread_serial, r.stack_serial) =
                    (t.object_id, Some(t.thread_serial), Some(t.stack_serial));
            }
        }
        Ok(r)
    }

    /// Writes this root as a sub-record, tag included.
    pub fn write(&self, w: &mut Writer) {
        let (tag, _, shape) = *ROOTS.iter().find(|r| r.1 == self.kind).unwrap_or(&ROOTS[0]);
        w.u1(tag);
        let (id, ts, fr) = (self.object_id, self.thread_serial.unwrap_or(0), self.frame.unwrap_or(u32::MAX));
        match shape {
            Shape::Id => RootId { object_id: id }.write(w),
            Shape::JniGlobal => RootJniGlobal { object_id: id, ref_id: self.ref_id.unwrap_or(0) }.write(w),
            Shape::Frame => RootFrame { object_id: id, thread_serial: ts, frame: fr }.write(w),
            Shape::Thread => RootThread { object_id: id, thread_serial: ts }.write(w),
            Shape::ThreadObject => {
                RootThreadObject { object_id: id, thread_serial: ts, stack_serial: self.stack_serial.unwrap_or(0) }
                    .write(w)
            }
        }
    }
}

/// A field value (static field or constant pool entry).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A reference (0 is null).
    Object(u64),
    /// Any primitive, as its raw bits widened to 64.
    Primitive(BasicType, u64),
}

impl Value {
    fn read(c: &mut Cursor<'_>, ty: BasicType) -> std::result::Result<Value, Short> {
        Ok(match ty {
            BasicType::Object => Value::Object(c.id()?),
            t => {
                let raw = match t.primitive_bytes() {
                    1 => u64::from(c.u1()?),
                    2 => u64::from(c.u2()?),
                    4 => u64::from(c.u4()?),
                    _ => c.u8()?,
                };
                Value::Primitive(t, raw)
            }
        })
    }

    /// The type of this value.
    pub fn ty(&self) -> BasicType {
        match self {
            Value::Object(_) => BasicType::Object,
            Value::Primitive(t, _) => *t,
        }
    }

    fn write(&self, w: &mut Writer) {
        w.u1(self.ty().code());
        match *self {
            Value::Object(id) => w.id(id),
            Value::Primitive(t, raw) => match t.primitive_bytes() {
                1 => w.u1(raw as u8),
                2 => w.u2(raw as u16),
                4 => w.u4(raw as u32),
                _ => w.u8(raw),
            },
        }
    }
}

/// A static field of a class dump.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaticField {
    /// Id of the name string.
    pub name_id: u64,
    /// The value.
    pub value: Value,
}

/// An instance field declaration of a class dump (declared in that class, not inherited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDecl {
    /// Id of the name string.
    pub name_id: u64,
    /// The field's type.
    pub ty: BasicType,
}

/// A CLASS_DUMP sub-record.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDump {
    /// Ids, serials and the dump's instance size.
    pub head: ClassDumpHead,
    /// Constant pool entries: index and value.
    pub constants: Vec<(u16, Value)>,
    /// Static fields with their values.
    pub statics: Vec<StaticField>,
    /// Instance fields declared by this class, in dump order.
    pub fields: Vec<FieldDecl>,
}

fn read_type(c: &mut Cursor<'_>, what: &'static str) -> Result<BasicType> {
    let offset = c.offset();
    let code = c.u1().map_err(|_| Error::Truncated { offset, what })?;
    BasicType::from_code(code).ok_or(Error::BadType { offset, code, what })
}

impl ClassDump {
    fn read(c: &mut Cursor<'_>, start: u64) -> Result<ClassDump> {
        let t = |_| Error::Truncated { offset: start, what: "CLASS_DUMP" };
        let head = ClassDumpHead::read(c).map_err(t)?;
        let mut constants = Vec::new();
        for _ in 0..c.u2().map_err(t)? {
            let index = c.u2().map_err(t)?;
            let ty = read_type(c, "CLASS_DUMP constant pool")?;
            constants.push((index, Value::read(c, ty).map_err(t)?));
        }
        let mut statics = Vec::new();
        for _ in 0..c.u2().map_err(t)? {
            let name_id = c.id().map_err(t)?;
            let ty = read_type(c, "CLASS_DUMP static field")?;
            statics.push(StaticField { name_id, value: Value::read(c, ty).map_err(t)? });
        }
        let mut fields = Vec::new();
        for _ in 0..c.u2().map_err(t)? {
            let name_id = c.id().map_err(t)?;
            fields.push(FieldDecl { name_id, ty: read_type(c, "CLASS_DUMP instance field")? });
        }
        Ok(ClassDump { head, constants, statics, fields })
    }

    fn write(&self, w: &mut Writer) {
        w.u1(sub::CLASS_DUMP);
        self.head.write(w);
        w.u2(self.constants.len() as u16);
        for (i, v) in &self.constants {
            w.u2(*i);
            v.write(w);
        }
        w.u2(self.statics.len() as u16);
        for s in &self.statics {
            w.id(s.name_id);
            s.value.write(w);
        }
        w.u2(self.fields.len() as u16);
        for f in &self.fields {
            w.id(f.name_id);
            w.u1(f.ty.code());
        }
    }
}

/// One heap dump sub-record.
#[derive(Debug, Clone, PartialEq)]
pub enum SubRecord<'a> {
    /// A GC root.
    Root(Root),
    /// A class.
    Class(Box<ClassDump>),
    /// An instance with its field values (most-derived class's fields first).
    Instance {
        /// Ids and length.
        head: InstanceHead,
        /// The field values as written.
        values: &'a [u8],
    },
    /// An array of references.
    ObjArray {
        /// Ids and length.
        head: ObjArrayHead,
        /// The element ids.
        elements: IdList<'a>,
    },
    /// An array of primitives (Android's NODATA variant has empty `data`).
    PrimArray {
        /// Ids, length and element type code.
        head: PrimArrayHead,
        /// The element type.
        elem: BasicType,
        /// The elements' bytes, big-endian.
        data: &'a [u8],
    },
    /// Android: the heap that the following objects belong to.
    HeapDumpInfo(HeapDumpInfo),
}

impl<'a> SubRecord<'a> {
    /// Reads the sub-record at the cursor; `Err` carries the sub-record's offset.
    #[inline]
    pub fn read(c: &mut Cursor<'a>) -> Result<SubRecord<'a>> {
        let start = c.offset();
        let t = |what| move |_| Error::Truncated { offset: start, what };
        let tag = c.u1().map_err(t("heap dump sub-record"))?;
        Ok(match tag {
            sub::INSTANCE_DUMP => {
                let head = InstanceHead::read(c).map_err(t("INSTANCE_DUMP"))?;
                let values = c.bytes(head.length as usize).map_err(t("INSTANCE_DUMP field values"))?;
                SubRecord::Instance { head, values }
            }
            sub::OBJ_ARRAY_DUMP => {
                let head = ObjArrayHead::read(c).map_err(t("OBJECT_ARRAY_DUMP"))?;
                let n = (head.length as usize).saturating_mul(c.id_size().bytes());
                let bytes = c.bytes(n).map_err(t("OBJECT_ARRAY_DUMP elements"))?;
                SubRecord::ObjArray { head, elements: IdList { bytes, id_size: c.id_size() } }
            }
            sub::PRIM_ARRAY_DUMP | sub::PRIM_ARRAY_NODATA => {
                let head = PrimArrayHead::read(c).map_err(t("PRIMITIVE_ARRAY_DUMP"))?;
                let elem = match BasicType::from_code(head.elem_type) {
                    Some(BasicType::Object) | None => {
                        return Err(Error::BadType { offset: start, code: head.elem_type, what: "primitive array" })
                    }
                    Some(e) => e,
                };
                let n = if tag == sub::PRIM_ARRAY_NODATA {
                    0
                } else {
                    head.length as usize * elem.primitive_bytes() as usize
                };
                let data = c.bytes(n).map_err(t("PRIMITIVE_ARRAY_DUMP elements"))?;
                SubRecord::PrimArray { head, elem, data }
            }
            sub::CLASS_DUMP => SubRecord::Class(Box::new(ClassDump::read(c, start)?)),
            sub::HEAP_DUMP_INFO => SubRecord::HeapDumpInfo(HeapDumpInfo::read(c).map_err(t("HEAP_DUMP_INFO"))?),
            other => match root_shape(other) {
                Some((kind, shape)) => SubRecord::Root(Root::read(kind, shape, c).map_err(t("GC root"))?),
                None => return Err(Error::UnknownSubRecord { offset: start, tag }),
            },
        })
    }

    /// Writes this sub-record, tag included.
    pub fn write(&self, w: &mut Writer) {
        match self {
            SubRecord::Root(r) => r.write(w),
            SubRecord::Class(c) => c.write(w),
            SubRecord::Instance { head, values } => {
                w.u1(sub::INSTANCE_DUMP);
                head.write(w);
                w.bytes(values);
            }
            SubRecord::ObjArray { head, elements } => {
                w.u1(sub::OBJ_ARRAY_DUMP);
                head.write(w);
                w.bytes(elements.bytes);
            }
            SubRecord::PrimArray { head, data, .. } => {
                w.u1(sub::PRIM_ARRAY_DUMP);
                head.write(w);
                w.bytes(data);
            }
            SubRecord::HeapDumpInfo(i) => {
                w.u1(sub::HEAP_DUMP_INFO);
                i.write(w);
            }
        }
    }
}

/// Iterates the sub-records of one heap dump body; stops after the first error.
#[derive(Debug, Clone)]
pub struct SubRecords<'a> {
    cursor: Cursor<'a>,
    failed: bool,
}

impl<'a> SubRecords<'a> {
    /// Sub-records of `body`, which starts at absolute offset `offset`.
    pub fn new(body: &'a [u8], offset: u64, id_size: IdSize) -> Self {
        SubRecords { cursor: Cursor::new(body, offset, id_size), failed: false }
    }

    /// Absolute offset of the next sub-record.
    pub fn offset(&self) -> u64 {
        self.cursor.offset()
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.cursor.remaining()
    }
}

impl<'a> Iterator for SubRecords<'a> {
    type Item = Result<(u64, SubRecord<'a>)>;

    // Inlined into the callers' loops (no LTO here): returned through memory, the record's
    // enum was reloaded by halves, a sixth of the histogram's time.
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.cursor.is_empty() {
            return None;
        }
        let at = self.cursor.offset();
        let r = SubRecord::read(&mut self.cursor);
        self.failed = r.is_err();
        Some(r.map(|s| (at, s)))
    }
}
