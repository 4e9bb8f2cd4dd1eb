//! Every fixed-size HPROF layout, declared once: each declaration yields the struct,
//! its reader and its writer, so the test kit writes exactly what the parser reads.

use crate::cursor::{Cursor, Short};
use crate::writer::Writer;
use crate::IdSize;

macro_rules! layouts {
    ($( $(#[$m:meta])* $name:ident { $( $(#[$fm:meta])* $field:ident : $kind:ident ),* $(,)? } )*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        #[allow(missing_docs)] // fields are named as in the HPROF specification
        pub struct $name { $( $(#[$fm])* pub $field: layouts!(@ty $kind) ),* }
        impl $name {
            /// Reads this layout at the cursor.
            #[inline]
            pub fn read(c: &mut Cursor<'_>) -> Result<Self, Short> {
                // The whole layout is taken in one bounds check, as a fixed-size array whose
                // fields sit at constant offsets: read field by field, each its own check and
                // error path, the heads of 34 M objects were a third of the histogram's time.
                const FOUR: usize = 0 $( + layouts!(@size 4, $kind) )*;
                const EIGHT: usize = 0 $( + layouts!(@size 8, $kind) )*;
                Ok(match c.id_size() {
                    IdSize::Four => {
                        let bytes: [u8; FOUR] = c.array()?;
                        let mut f = Fixed { bytes: &bytes, at: 0, id: 4 };
                        Self { $( $field: layouts!(@fixed f $kind) ),* }
                    }
                    IdSize::Eight => {
                        let bytes: [u8; EIGHT] = c.array()?;
                        let mut f = Fixed { bytes: &bytes, at: 0, id: 8 };
                        Self { $( $field: layouts!(@fixed f $kind) ),* }
                    }
                })
            }
            /// Writes this layout.
            pub fn write(&self, w: &mut Writer) {
                $( layouts!(@write w self.$field, $kind); )*
            }
        }
    )*};
    (@ty id) => { u64 };
    (@ty u1) => { u8 };
    (@ty u2) => { u16 };
    (@ty u4) => { u32 };
    (@ty i4) => { i32 };
    (@ty u8) => { u64 };
    (@size $id:literal, id) => { $id };
    (@size $id:literal, u1) => { 1 };
    (@size $id:literal, u2) => { 2 };
    (@size $id:literal, u4) => { 4 };
    (@size $id:literal, i4) => { 4 };
    (@size $id:literal, u8) => { 8 };
    (@fixed $f:ident id) => { $f.id() };
    (@fixed $f:ident u1) => { u8::from_be_bytes($f.take()) };
    (@fixed $f:ident u2) => { u16::from_be_bytes($f.take()) };
    (@fixed $f:ident u4) => { u32::from_be_bytes($f.take()) };
    (@fixed $f:ident i4) => { i32::from_be_bytes($f.take()) };
    (@fixed $f:ident u8) => { u64::from_be_bytes($f.take()) };
    (@write $w:ident $v:expr, id) => { $w.id($v) };
    (@write $w:ident $v:expr, u1) => { $w.u1($v) };
    (@write $w:ident $v:expr, u2) => { $w.u2($v) };
    (@write $w:ident $v:expr, u4) => { $w.u4($v) };
    (@write $w:ident $v:expr, i4) => { $w.i4($v) };
    (@write $w:ident $v:expr, u8) => { $w.u8($v) };
}

/// A layout's bytes, already taken whole from the cursor, read field by field.
struct Fixed<'b> {
    bytes: &'b [u8],
    at: usize,
    /// Bytes of an identifier: 4 or 8.
    id: usize,
}

impl Fixed<'_> {
    /// The next `N` bytes: within the layout's size by construction, so the compiler, which
    /// sees the array's length and the constant offsets, drops the check.
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        a
    }

    #[inline(always)]
    fn id(&mut self) -> u64 {
        if self.id == 4 {
            u64::from(u32::from_be_bytes(self.take()))
        } else {
            u64::from_be_bytes(self.take())
        }
    }
}

layouts! {
    /// Head of every top-level record: tag, microseconds since the header's timestamp, body length.
    RecordHead { tag: u1, time_delta: u4, length: u4 }
    /// LOAD_CLASS (0x02): binds a class object id to a serial number and a name string.
    LoadClass { serial: u4, class_id: id, stack_serial: u4, name_id: id }
    /// UNLOAD_CLASS (0x03).
    UnloadClass { serial: u4 }
    /// STACK_FRAME (0x04): one method frame; `line` > 0 is a line number, other values are HPROF codes.
    StackFrame { frame_id: id, method_name_id: id, signature_id: id, source_file_id: id, class_serial: u4, line: i4 }
    /// Fixed part of STACK_TRACE (0x05); `frame_count` frame ids follow.
    StackTraceHead { serial: u4, thread_serial: u4, frame_count: u4 }
    /// START_THREAD (0x0A).
    StartThread { thread_serial: u4, object_id: id, stack_serial: u4, name_id: id, group_name_id: id, parent_group_name_id: id }
    /// END_THREAD (0x0B).
    EndThread { thread_serial: u4 }
    /// HEAP_SUMMARY (0x07).
    HeapSummary { live_bytes: u4, live_instances: u4, allocated_bytes: u8, allocated_instances: u8 }
    /// Fixed part of CLASS_DUMP (0x20); constant pool, statics and instance fields follow.
    ClassDumpHead { class_id: id, stack_serial: u4, super_id: id, loader_id: id, signers_id: id,
        protection_domain_id: id, reserved1: id, reserved2: id, instance_size: u4 }
    /// Fixed part of INSTANCE_DUMP (0x21); `length` bytes of field values follow.
    InstanceHead { object_id: id, stack_serial: u4, class_id: id, length: u4 }
    /// Fixed part of OBJECT_ARRAY_DUMP (0x22); `length` element ids follow.
    ObjArrayHead { object_id: id, stack_serial: u4, length: u4, class_id: id }
    /// Fixed part of PRIMITIVE_ARRAY_DUMP (0x23), and all of Android's PRIMITIVE_ARRAY_NODATA (0xC3).
    PrimArrayHead { object_id: id, stack_serial: u4, length: u4, elem_type: u1 }
    /// Android's HEAP_DUMP_INFO (0xFE): which heap the following objects live in.
    HeapDumpInfo { heap_id: u4, name_id: id }
    /// A root sub-record that names only the object.
    RootId { object_id: id }
    /// ROOT_JNI_GLOBAL: the object and the JNI global reference's id.
    RootJniGlobal { object_id: id, ref_id: id }
    /// Roots held by a thread's frame: JNI local, Java frame, Android JNI monitor.
    RootFrame { object_id: id, thread_serial: u4, frame: u4 }
    /// Roots held by a thread: native stack, thread block.
    RootThread { object_id: id, thread_serial: u4 }
    /// ROOT_THREAD_OBJECT: the java.lang.Thread of a thread serial, with its stack trace.
    RootThreadObject { object_id: id, thread_serial: u4, stack_serial: u4 }
}
