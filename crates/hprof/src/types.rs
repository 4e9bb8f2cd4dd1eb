//! Tags, basic types and root kinds of the format.

use crate::cursor::IdSize;

/// Top-level record tags.
pub mod tag {
    /// A UTF-8 string with its id.
    pub const UTF8: u8 = 0x01;
    /// A loaded class.
    pub const LOAD_CLASS: u8 = 0x02;
    /// An unloaded class.
    pub const UNLOAD_CLASS: u8 = 0x03;
    /// A stack frame.
    pub const STACK_FRAME: u8 = 0x04;
    /// A stack trace.
    pub const STACK_TRACE: u8 = 0x05;
    /// Allocation sites (old hprof agent).
    pub const ALLOC_SITES: u8 = 0x06;
    /// Heap summary (old hprof agent).
    pub const HEAP_SUMMARY: u8 = 0x07;
    /// Thread start.
    pub const START_THREAD: u8 = 0x0A;
    /// Thread end.
    pub const END_THREAD: u8 = 0x0B;
    /// An unsegmented heap dump.
    pub const HEAP_DUMP: u8 = 0x0C;
    /// CPU samples (old hprof agent).
    pub const CPU_SAMPLES: u8 = 0x0D;
    /// Control settings (old hprof agent).
    pub const CONTROL_SETTINGS: u8 = 0x0E;
    /// One segment of a segmented heap dump.
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    /// End of a segmented heap dump.
    pub const HEAP_DUMP_END: u8 = 0x2C;
}

/// Heap dump sub-record tags.
pub mod sub {
    /// Root of unknown kind.
    pub const ROOT_UNKNOWN: u8 = 0xFF;
    /// JNI global reference.
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    /// JNI local reference.
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    /// Java stack frame local.
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    /// Native stack.
    pub const ROOT_NATIVE_STACK: u8 = 0x04;
    /// System class.
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    /// Thread block.
    pub const ROOT_THREAD_BLOCK: u8 = 0x06;
    /// Monitor in use.
    pub const ROOT_MONITOR_USED: u8 = 0x07;
    /// Thread object.
    pub const ROOT_THREAD_OBJECT: u8 = 0x08;
    /// Android: interned string.
    pub const ROOT_INTERNED_STRING: u8 = 0x89;
    /// Android: awaiting finalization.
    pub const ROOT_FINALIZING: u8 = 0x8A;
    /// Android: held by the debugger.
    pub const ROOT_DEBUGGER: u8 = 0x8B;
    /// Android: reference cleanup.
    pub const ROOT_REFERENCE_CLEANUP: u8 = 0x8C;
    /// Android: VM internal.
    pub const ROOT_VM_INTERNAL: u8 = 0x8D;
    /// Android: JNI monitor.
    pub const ROOT_JNI_MONITOR: u8 = 0x8E;
    /// Android: unreachable.
    pub const ROOT_UNREACHABLE: u8 = 0x90;
    /// Class dump.
    pub const CLASS_DUMP: u8 = 0x20;
    /// Instance dump.
    pub const INSTANCE_DUMP: u8 = 0x21;
    /// Object array dump.
    pub const OBJ_ARRAY_DUMP: u8 = 0x22;
    /// Primitive array dump.
    pub const PRIM_ARRAY_DUMP: u8 = 0x23;
    /// Android: primitive array without its data.
    pub const PRIM_ARRAY_NODATA: u8 = 0xC3;
    /// Android: heap dump info.
    pub const HEAP_DUMP_INFO: u8 = 0xFE;
}

/// The type of a field, static or array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BasicType {
    /// A reference.
    Object,
    /// `boolean`.
    Boolean,
    /// `char`.
    Char,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `byte`.
    Byte,
    /// `short`.
    Short,
    /// `int`.
    Int,
    /// `long`.
    Long,
}

impl BasicType {
    /// All primitive types, in HPROF code order.
    pub const PRIMITIVES: [BasicType; 8] = [
        BasicType::Boolean,
        BasicType::Char,
        BasicType::Float,
        BasicType::Double,
        BasicType::Byte,
        BasicType::Short,
        BasicType::Int,
        BasicType::Long,
    ];

    /// Decodes an HPROF type code.
    pub fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            2 => BasicType::Object,
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// The HPROF type code.
    pub fn code(self) -> u8 {
        match self {
            BasicType::Object => 2,
            BasicType::Boolean => 4,
            BasicType::Char => 5,
            BasicType::Float => 6,
            BasicType::Double => 7,
            BasicType::Byte => 8,
            BasicType::Short => 9,
            BasicType::Int => 10,
            BasicType::Long => 11,
        }
    }

    /// Size of a value of this type in the dump (references take the id size).
    pub fn dump_bytes(self, id_size: IdSize) -> usize {
        match self {
            BasicType::Object => id_size.bytes(),
            other => other.primitive_bytes() as usize,
        }
    }

    /// Size of a primitive in the JVM; 0 for references, whose size depends on the VM's layout.
    pub fn primitive_bytes(self) -> u32 {
        match self {
            BasicType::Object => 0,
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }

    /// The Java source name of the primitive type (`int`), or `Object` for references.
    pub fn java_name(self) -> &'static str {
        match self {
            BasicType::Object => "Object",
            BasicType::Boolean => "boolean",
            BasicType::Char => "char",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::Byte => "byte",
            BasicType::Short => "short",
            BasicType::Int => "int",
            BasicType::Long => "long",
        }
    }

    /// The JVM descriptor letter of a primitive (`I` for int).
    pub fn descriptor(self) -> char {
        match self {
            BasicType::Object => 'L',
            BasicType::Boolean => 'Z',
            BasicType::Char => 'C',
            BasicType::Float => 'F',
            BasicType::Double => 'D',
            BasicType::Byte => 'B',
            BasicType::Short => 'S',
            BasicType::Int => 'I',
            BasicType::Long => 'J',
        }
    }
}

/// What kind of GC root a root sub-record declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RootKind {
    /// ROOT_UNKNOWN.
    Unknown,
    /// A JNI global reference.
    JniGlobal,
    /// A JNI local reference in a thread's frame.
    JniLocal,
    /// A local variable or operand of a Java frame.
    JavaFrame,
    /// A reference from a thread's native stack.
    NativeStack,
    /// A system class (loaded by the bootstrap loader).
    StickyClass,
    /// A thread block.
    ThreadBlock,
    /// An object used as a monitor.
    MonitorUsed,
    /// A live thread's `java.lang.Thread`.
    ThreadObject,
    /// Android: an interned string.
    InternedString,
    /// Android: an object awaiting finalization.
    Finalizing,
    /// Android: held by the debugger.
    Debugger,
    /// Android: reference cleanup.
    ReferenceCleanup,
    /// Android: VM internal.
    VmInternal,
    /// Android: a JNI monitor.
    JniMonitor,
    /// Android: unreachable object kept for analysis.
    Unreachable,
}

impl RootKind {
    /// True for roots a thread holds only while a frame runs (a Java frame's local, a JNI
    /// local, the native stack, a thread block): they change from one moment to the next, so
    /// paths start from them only where nothing longer-lived leads, as LeakCanary orders them.
    pub fn held_by_frame(self) -> bool {
        matches!(self, RootKind::JavaFrame | RootKind::JniLocal | RootKind::NativeStack | RootKind::ThreadBlock)
    }

    /// A short lowercase name for reports (`java frame`, `jni global`).
    pub fn name(self) -> &'static str {
        match self {
            RootKind::Unknown => "unknown",
            RootKind::JniGlobal => "jni global",
            RootKind::JniLocal => "jni local",
            RootKind::JavaFrame => "java frame",
            RootKind::NativeStack => "native stack",
            RootKind::StickyClass => "system class",
            RootKind::ThreadBlock => "thread block",
            RootKind::MonitorUsed => "monitor used",
            RootKind::ThreadObject => "thread",
            RootKind::InternedString => "interned string",
            RootKind::Finalizing => "finalizing",
            RootKind::Debugger => "debugger",
            RootKind::ReferenceCleanup => "reference cleanup",
            RootKind::VmInternal => "vm internal",
            RootKind::JniMonitor => "jni monitor",
            RootKind::Unreachable => "unreachable",
        }
    }
}
