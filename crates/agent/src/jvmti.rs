//! Hand-written JVMTI and JNI bindings: the functions leakscope needs, called through the
//! VM's function tables (jvmti.h and jni.h, JDK 17 and 25 alike).
//!
//! The JVMTI table is a `#[repr(C)]` struct of typed function pointers at their jvmti.h
//! positions (the unused ones as padding, a test checks every offset), so no call site
//! picks a slot number or infers a type. Every call checks the returned error code.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

/// `jint`.
pub type Jint = i32;
/// `jlong`.
pub type Jlong = i64;
/// `jobject`, `jclass`, `jthread`: opaque references.
pub type Jobject = *mut c_void;
/// `jmethodID`.
pub type JmethodId = *mut c_void;
/// `jlocation`.
pub type Jlocation = i64;

/// `JVMTI_VERSION_11`: the first version with heap sampling.
pub const JVMTI_VERSION_11: Jint = 0x300B_0000;

/// The JVMTI error a call returned, with its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JvmtiError(pub u32);

impl std::fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.0 {
            11 => "INVALID_THREAD",
            15 => "THREAD_NOT_ALIVE",
            20 => "INVALID_OBJECT",
            21 => "INVALID_CLASS",
            22 => "CLASS_NOT_PREPARED",
            23 => "INVALID_METHODID",
            25 => "INVALID_FIELDID",
            98 => "NOT_AVAILABLE",
            99 => "MUST_POSSESS_CAPABILITY",
            100 => "NULL_POINTER",
            101 => "ABSENT_INFORMATION",
            103 => "ILLEGAL_ARGUMENT",
            110 => "OUT_OF_MEMORY",
            112 => "WRONG_PHASE",
            113 => "INTERNAL",
            115 => "UNATTACHED_THREAD",
            116 => "INVALID_ENVIRONMENT",
            _ => "",
        };
        write!(f, "JVMTI error {} {name}", self.0)
    }
}

/// Result of a JVMTI call.
pub type JResult<T> = Result<T, JvmtiError>;

fn check(code: u32) -> JResult<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(JvmtiError(code))
    }
}

/// `jvmtiCapabilities`: 128 bits, little-endian bit fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Capabilities(pub [u32; 4]);

impl Capabilities {
    /// Bit numbers in the order of jvmti.h.
    pub const TAG_OBJECTS: u32 = 0;
    /// `can_get_source_file_name`.
    pub const SOURCE_FILE_NAME: u32 = 11;
    /// `can_get_line_numbers`.
    pub const LINE_NUMBERS: u32 = 12;
    /// `can_generate_garbage_collection_events`.
    pub const GC_EVENTS: u32 = 31;
    /// `can_generate_object_free_events`.
    pub const OBJECT_FREE: u32 = 32;
    /// `can_retransform_classes`.
    pub const RETRANSFORM: u32 = 37;
    /// `can_generate_sampled_object_alloc_events`.
    pub const SAMPLED_ALLOC: u32 = 43;

    /// Sets capability `bit`.
    pub fn with(mut self, bit: u32) -> Self {
        self.0[(bit / 32) as usize] |= 1 << (bit % 32);
        self
    }

    /// Whether capability `bit` is set.
    pub fn has(&self, bit: u32) -> bool {
        self.0[(bit / 32) as usize] & (1 << (bit % 32)) != 0
    }
}

/// Event numbers.
pub mod event {
    /// `JVMTI_EVENT_VM_INIT`.
    pub const VM_INIT: u32 = 50;
    /// `JVMTI_EVENT_VM_DEATH`.
    pub const VM_DEATH: u32 = 51;
    /// `JVMTI_EVENT_CLASS_FILE_LOAD_HOOK`.
    pub const CLASS_FILE_LOAD_HOOK: u32 = 54;
    /// `JVMTI_EVENT_CLASS_PREPARE`.
    pub const CLASS_PREPARE: u32 = 56;
    /// `JVMTI_EVENT_GARBAGE_COLLECTION_FINISH`.
    pub const GC_FINISH: u32 = 82;
    /// `JVMTI_EVENT_OBJECT_FREE`.
    pub const OBJECT_FREE: u32 = 83;
    /// `JVMTI_EVENT_SAMPLED_OBJECT_ALLOC`.
    pub const SAMPLED_ALLOC: u32 = 86;
}

/// `jvmtiEventCallbacks`: one slot per event number 50..=86.
#[repr(C)]
pub struct EventCallbacks(pub [*const c_void; 37]);

impl EventCallbacks {
    /// No callbacks.
    pub fn new() -> Self {
        EventCallbacks([ptr::null(); 37])
    }

    /// Sets the callback of `event`.
    pub fn set(&mut self, event: u32, f: *const c_void) {
        self.0[(event - 50) as usize] = f;
    }
}

impl Default for EventCallbacks {
    fn default() -> Self {
        Self::new()
    }
}

/// `jvmtiHeapReferenceCallback`.
pub type HeapReferenceCallback = unsafe extern "C" fn(
    kind: u32,
    info: *const Jint,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    tag_ptr: *mut Jlong,
    referrer_tag_ptr: *mut Jlong,
    length: Jint,
    user_data: *mut c_void,
) -> Jint;

/// `jvmtiArrayPrimitiveValueCallback`.
pub type ArrayPrimitiveCallback = unsafe extern "C" fn(
    class_tag: Jlong,
    size: Jlong,
    tag_ptr: *mut Jlong,
    element_count: Jint,
    element_type: u32,
    elements: *const c_void,
    user_data: *mut c_void,
) -> Jint;

/// `jvmtiHeapCallbacks`.
#[repr(C)]
pub struct HeapCallbacks {
    /// Only for IterateThroughHeap.
    pub heap_iteration: *const c_void,
    /// Every reference the walk follows.
    pub heap_reference: Option<HeapReferenceCallback>,
    /// Primitive fields (unused).
    pub primitive_field: *const c_void,
    /// Once per primitive array.
    pub array_primitive_value: Option<ArrayPrimitiveCallback>,
    /// Strings (unused).
    pub string_primitive_value: *const c_void,
    /// Reserved slots.
    pub reserved: [*const c_void; 10],
}

/// Heap reference kinds (`jvmtiHeapReferenceKind`).
pub mod reference {
    /// Object to its class.
    pub const CLASS: u32 = 1;
    /// Instance field.
    pub const FIELD: u32 = 2;
    /// Object array element.
    pub const ARRAY_ELEMENT: u32 = 3;
    /// Static field of a class.
    pub const STATIC_FIELD: u32 = 8;
}

/// `JVMTI_VISIT_OBJECTS`.
pub const VISIT_OBJECTS: Jint = 0x100;
/// `JVMTI_VISIT_ABORT`.
pub const VISIT_ABORT: Jint = 0x8000;

/// A field of a class (`Env::class_fields`).
#[derive(Debug, Clone)]
pub struct FieldInfo {
    /// Its `jfieldID`, which JNI's field accessors take.
    pub id: *mut c_void,
    /// Its name.
    pub name: String,
    /// Its type signature.
    pub signature: String,
    /// A static field.
    pub is_static: bool,
}

impl FieldInfo {
    /// Whether it holds a reference (an object or an array).
    pub fn is_reference(&self) -> bool {
        self.signature.starts_with(['L', '['])
    }
}

/// `jvmtiFrameInfo`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FrameInfo {
    /// The method.
    pub method: JmethodId,
    /// Bytecode index.
    pub location: Jlocation,
}

/// `jvmtiLineNumberEntry`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct LineNumberEntry {
    start: Jlocation,
    line: Jint,
}

/// An entry of a function table leakscope does not call.
type Unused = *const c_void;

/// `jvmtiInterface_1`: the JVMTI function table, each used function at its jvmti.h slot
/// (slot `n` is field `n - 1`; `offsets_match_jvmti_h` checks each). A slot the VM leaves
/// empty reads as `None`.
#[repr(C)]
struct JvmtiInterface {
    _reserved1: Unused,
    set_event_notification_mode: Option<unsafe extern "C" fn(Env, u32, u32, Jobject, ...) -> u32>, // 2
    _s3: [Unused; 43],
    allocate: Option<unsafe extern "C" fn(Env, Jlong, *mut *mut u8) -> u32>, // 46
    deallocate: Option<unsafe extern "C" fn(Env, *mut c_void) -> u32>,       // 47
    get_class_signature: Option<unsafe extern "C" fn(Env, Jobject, *mut *mut c_char, *mut *mut c_char) -> u32>, // 48
    _s49: Unused,
    get_source_file_name: Option<unsafe extern "C" fn(Env, Jobject, *mut *mut c_char) -> u32>, // 50
    _s51: [Unused; 2],
    get_class_fields: Option<unsafe extern "C" fn(Env, Jobject, *mut Jint, *mut *mut *mut c_void) -> u32>, // 53
    get_implemented_interfaces: Option<unsafe extern "C" fn(Env, Jobject, *mut Jint, *mut *mut Jobject) -> u32>, // 54
    _s55: [Unused; 5],
    get_field_name: Option<
        unsafe extern "C" fn(Env, Jobject, *mut c_void, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char) -> u32,
    >, // 60
    _s61: Unused,
    get_field_modifiers: Option<unsafe extern "C" fn(Env, Jobject, *mut c_void, *mut Jint) -> u32>, // 62
    _s63: Unused,
    get_method_name:
        Option<unsafe extern "C" fn(Env, JmethodId, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char) -> u32>, // 64
    get_method_declaring_class: Option<unsafe extern "C" fn(Env, JmethodId, *mut Jobject) -> u32>, // 65
    _s66: [Unused; 4],
    get_line_number_table: Option<unsafe extern "C" fn(Env, JmethodId, *mut Jint, *mut *mut LineNumberEntry) -> u32>, // 70
    _s71: [Unused; 7],
    get_loaded_classes: Option<unsafe extern "C" fn(Env, *mut Jint, *mut *mut Jobject) -> u32>, // 78
    _s79: [Unused; 25],
    get_stack_trace: Option<unsafe extern "C" fn(Env, Jobject, Jint, Jint, *mut FrameInfo, *mut Jint) -> u32>, // 104
    _s105: Unused,
    get_tag: Option<unsafe extern "C" fn(Env, Jobject, *mut Jlong) -> u32>, // 106
    set_tag: Option<unsafe extern "C" fn(Env, Jobject, Jlong) -> u32>,      // 107
    _s108: [Unused; 6],
    get_objects_with_tags:
        Option<unsafe extern "C" fn(Env, Jint, *const Jlong, *mut Jint, *mut *mut Jobject, *mut *mut Jlong) -> u32>, // 114
    follow_references:
        Option<unsafe extern "C" fn(Env, Jint, Jobject, Jobject, *const HeapCallbacks, *mut c_void) -> u32>, // 115
    _s116: [Unused; 6],
    set_event_callbacks: Option<unsafe extern "C" fn(Env, *const EventCallbacks, Jint) -> u32>, // 122
    _s123: [Unused; 4],
    dispose_environment: Option<unsafe extern "C" fn(Env) -> u32>, // 127
    _s128: [Unused; 3],
    get_system_property: Option<unsafe extern "C" fn(Env, *const c_char, *mut *mut c_char) -> u32>, // 131
    _s132: [Unused; 8],
    get_potential_capabilities: Option<unsafe extern "C" fn(Env, *mut Capabilities) -> u32>, // 140
    _s141: Unused,
    add_capabilities: Option<unsafe extern "C" fn(Env, *const Capabilities) -> u32>, // 142
    _s143: [Unused; 6],
    add_to_bootstrap_class_loader_search: Option<unsafe extern "C" fn(Env, *const c_char) -> u32>, // 149
    _s150: [Unused; 2],
    retransform_classes: Option<unsafe extern "C" fn(Env, Jint, *const Jobject) -> u32>, // 152
    _s153: Unused,
    get_object_size: Option<unsafe extern "C" fn(Env, Jobject, *mut Jlong) -> u32>, // 154
    _s155: Unused,
    set_heap_sampling_interval: Option<unsafe extern "C" fn(Env, Jint) -> u32>, // 156
}

/// A JVMTI environment (`jvmtiEnv*`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Env(*mut c_void);

// SAFETY: a jvmtiEnv may be used from any attached thread (JVMTI spec, "Environments").
unsafe impl Send for Env {}
// SAFETY: as above.
unsafe impl Sync for Env {}

/// JVMTI's `NOT_AVAILABLE`, for a function the VM's table leaves empty.
const NOT_AVAILABLE: JvmtiError = JvmtiError(98);

/// The function `$f` of `$env`'s table, or `NOT_AVAILABLE` from the enclosing function.
macro_rules! function {
    ($env:expr, $f:ident) => {
        match $env.table().$f {
            Some(f) => f,
            None => return Err(NOT_AVAILABLE),
        }
    };
}

impl Env {
    fn table(&self) -> &JvmtiInterface {
        // SAFETY: an `Env` only comes from GetEnv (`Env::of`), whose result points at a
        // JVMTI environment whose first word is its function table, valid while the VM runs.
        unsafe { &**(self.0 as *const *const JvmtiInterface) }
    }

    /// Gets the JVMTI environment of `vm` (`JavaVM*`).
    pub fn of(vm: &Vm) -> JResult<Env> {
        vm.get_env(JVMTI_VERSION_11).map(Env).map_err(|rc| JvmtiError(rc.unsigned_abs()))
    }

    /// Capabilities this environment could add now.
    pub fn potential_capabilities(&self) -> JResult<Capabilities> {
        let f = function!(self, get_potential_capabilities);
        let mut c = Capabilities::default();
        // SAFETY: valid out-pointer.
        check(unsafe { f(*self, &mut c) })?;
        Ok(c)
    }

    /// Adds capabilities.
    pub fn add_capabilities(&self, c: &Capabilities) -> JResult<()> {
        let f = function!(self, add_capabilities);
        // SAFETY: valid pointer.
        check(unsafe { f(*self, c) })
    }

    /// Installs event callbacks.
    pub fn set_event_callbacks(&self, cb: &EventCallbacks) -> JResult<()> {
        let f = function!(self, set_event_callbacks);
        // SAFETY: the struct is copied by the VM.
        check(unsafe { f(*self, cb, std::mem::size_of::<EventCallbacks>() as Jint) })
    }

    /// Enables or disables an event for all threads.
    pub fn set_event(&self, enable: bool, event: u32) -> JResult<()> {
        let f = function!(self, set_event_notification_mode);
        // SAFETY: JVMTI_ENABLE = 1, JVMTI_DISABLE = 0; a null thread means all threads.
        check(unsafe { f(*self, u32::from(enable), event, ptr::null_mut()) })
    }

    /// Sets the mean bytes between heap samples (0 samples every allocation).
    pub fn set_heap_sampling_interval(&self, bytes: Jint) -> JResult<()> {
        let f = function!(self, set_heap_sampling_interval);
        // SAFETY: plain call.
        check(unsafe { f(*self, bytes) })
    }

    /// The tag of `object` (0: none).
    pub fn get_tag(&self, object: Jobject) -> JResult<Jlong> {
        let f = function!(self, get_tag);
        let mut tag = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { f(*self, object, &mut tag) })?;
        Ok(tag)
    }

    /// Tags `object`.
    pub fn set_tag(&self, object: Jobject, tag: Jlong) -> JResult<()> {
        let f = function!(self, set_tag);
        // SAFETY: plain call.
        check(unsafe { f(*self, object, tag) })
    }

    /// Memory from the VM's allocator (what a class file load hook must return), filled with `bytes`.
    pub fn allocate_copy(&self, bytes: &[u8]) -> JResult<*mut u8> {
        let f = function!(self, allocate);
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { f(*self, bytes.len() as Jlong, &mut p) })?;
        // SAFETY: the VM gave `bytes.len()` writable bytes.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(p)
    }

    /// Adds a jar to the bootstrap class path (`AddToBootstrapClassLoaderSearch`).
    pub fn add_to_bootstrap(&self, jar: &CStr) -> JResult<()> {
        let f = function!(self, add_to_bootstrap_class_loader_search);
        // SAFETY: a NUL-terminated path.
        check(unsafe { f(*self, jar.as_ptr()) })
    }

    /// Runs the class file load hooks again on loaded classes (`RetransformClasses`).
    pub fn retransform(&self, classes: &[Jobject]) -> JResult<()> {
        let f = function!(self, retransform_classes);
        // SAFETY: `classes` holds valid class references.
        check(unsafe { f(*self, classes.len() as Jint, classes.as_ptr()) })
    }

    /// Frees memory the VM allocated for a result.
    pub fn deallocate(&self, p: *mut c_void) {
        if p.is_null() {
            return;
        }
        let Some(f) = self.table().deallocate else { return };
        // SAFETY: `p` came from this environment.
        unsafe { f(*self, p) };
    }

    fn take_string(&self, p: *mut c_char) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: JVMTI returns NUL-terminated modified UTF-8.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        self.deallocate(p.cast());
        s
    }

    /// The JVM signature of a class (`Ljava/lang/String;`, `[I`).
    pub fn class_signature(&self, class: Jobject) -> JResult<String> {
        let f = function!(self, get_class_signature);
        let mut sig = ptr::null_mut();
        // SAFETY: valid out-pointer; the generic signature is not asked for.
        check(unsafe { f(*self, class, &mut sig, ptr::null_mut()) })?;
        Ok(self.take_string(sig))
    }

    /// All loaded classes, as local references of the calling thread.
    pub fn loaded_classes(&self) -> JResult<Vec<Jobject>> {
        let f = function!(self, get_loaded_classes);
        let mut n = 0;
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointers; the array is copied and freed.
        check(unsafe { f(*self, &mut n, &mut p) })?;
        let v = self.take_array(p, n);
        Ok(v)
    }

    /// Copies an array of `n` elements the VM allocated for a JVMTI result, and frees it.
    fn take_array<T: Copy>(&self, p: *mut T, n: Jint) -> Vec<T> {
        let v = if p.is_null() {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned `n` elements at `p`, valid until deallocated below.
            unsafe { std::slice::from_raw_parts(p, n.max(0) as usize) }.to_vec()
        };
        self.deallocate(p.cast());
        v
    }

    /// Names of the fields a class declares, in the order of GetClassFields.
    pub fn class_field_names(&self, class: Jobject) -> JResult<Vec<String>> {
        let f = function!(self, get_class_fields);
        let name = function!(self, get_field_name);
        let mut n = 0;
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(*self, class, &mut n, &mut p) })?;
        let ids = self.take_array(p, n);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let mut s = ptr::null_mut();
            // SAFETY: `id` is a field of `class`.
            check(unsafe { name(*self, class, id, &mut s, ptr::null_mut(), ptr::null_mut()) })?;
            out.push(self.take_string(s));
        }
        Ok(out)
    }

    /// The fields a class declares, in the order of GetClassFields: each one's id, name,
    /// type signature (`Ljava/util/List;`, `[B`, `I`) and whether it is static.
    pub fn class_fields(&self, class: Jobject) -> JResult<Vec<FieldInfo>> {
        let f = function!(self, get_class_fields);
        let name = function!(self, get_field_name);
        let modifiers = function!(self, get_field_modifiers);
        let mut n = 0;
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(*self, class, &mut n, &mut p) })?;
        let ids = self.take_array(p, n);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let (mut s, mut sig, mut m) = (ptr::null_mut(), ptr::null_mut(), 0);
            // SAFETY: `id` is a field of `class`; the strings are copied and freed.
            check(unsafe { name(*self, class, id, &mut s, &mut sig, ptr::null_mut()) })?;
            check(unsafe { modifiers(*self, class, id, &mut m) })?;
            out.push(FieldInfo {
                id,
                name: self.take_string(s),
                signature: self.take_string(sig),
                is_static: m & 0x0008 != 0,
            });
        }
        Ok(out)
    }

    /// The interfaces a class or interface declares it implements (or extends), as local
    /// references of the calling thread.
    pub fn implemented_interfaces(&self, class: Jobject) -> JResult<Vec<Jobject>> {
        let f = function!(self, get_implemented_interfaces);
        let mut n = 0;
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointers; the array is copied and freed.
        check(unsafe { f(*self, class, &mut n, &mut p) })?;
        let v = self.take_array(p, n);
        Ok(v)
    }

    /// The objects carrying any of `tags`, with their tags, as local references of the calling
    /// thread (an object may be missing: freed, or its tag changed).
    pub fn objects_with_tags(&self, tags: &[Jlong]) -> JResult<Vec<(Jobject, Jlong)>> {
        let f = function!(self, get_objects_with_tags);
        let (mut n, mut objects, mut found) = (0, ptr::null_mut(), ptr::null_mut());
        // SAFETY: `tags` outlives the call; both result arrays are copied and freed.
        check(unsafe { f(*self, tags.len() as Jint, tags.as_ptr(), &mut n, &mut objects, &mut found) })?;
        let n = n.max(0) as usize;
        let out = if objects.is_null() || found.is_null() {
            Vec::new()
        } else {
            // SAFETY: the VM returned `n` entries in each.
            let (o, t) = unsafe { (std::slice::from_raw_parts(objects, n), std::slice::from_raw_parts(found, n)) };
            o.iter().copied().zip(t.iter().copied()).collect()
        };
        self.deallocate(objects.cast());
        self.deallocate(found.cast());
        Ok(out)
    }

    /// The size of an object in the JVM, bytes.
    pub fn object_size(&self, object: Jobject) -> JResult<u64> {
        let f = function!(self, get_object_size);
        let mut size = 0;
        // SAFETY: a valid reference and out-pointer.
        check(unsafe { f(*self, object, &mut size) })?;
        Ok(size.max(0) as u64)
    }

    /// Up to `frames.len()` frames of the current thread's stack, innermost first.
    pub fn stack_trace(&self, frames: &mut [FrameInfo]) -> JResult<usize> {
        let f = function!(self, get_stack_trace);
        let mut n = 0;
        // SAFETY: the buffer holds `frames.len()` entries; a null thread is the current one.
        check(unsafe { f(*self, ptr::null_mut(), 0, frames.len() as Jint, frames.as_mut_ptr(), &mut n) })?;
        Ok(n.max(0) as usize)
    }

    /// `Class.method` and source `File.java:line` of a frame, as far as the VM knows them.
    pub fn describe_frame(&self, frame: &FrameInfo) -> String {
        let (Some(method_name), Some(declaring)) =
            (self.table().get_method_name, self.table().get_method_declaring_class)
        else {
            return "(unknown method)".into();
        };
        let mut name = ptr::null_mut();
        // SAFETY: the method id came from GetStackTrace; unloaded methods return an error.
        if unsafe { method_name(*self, frame.method, &mut name, ptr::null_mut(), ptr::null_mut()) } != 0 {
            return "(unloaded method)".into();
        }
        let name = self.take_string(name);
        let mut class = ptr::null_mut();
        // SAFETY: as above.
        let class_name = if unsafe { declaring(*self, frame.method, &mut class) } == 0 {
            self.class_signature(class).map(|s| crate::names::source_name(&s)).unwrap_or_default()
        } else {
            String::new()
        };
        let file = self.source_file(class);
        match (file, self.line_of(frame)) {
            (Some(file), Some(line)) => format!("{class_name}.{name}({file}:{line})"),
            (Some(file), None) => format!("{class_name}.{name}({file})"),
            _ => format!("{class_name}.{name}"),
        }
    }

    fn source_file(&self, class: Jobject) -> Option<String> {
        if class.is_null() {
            return None;
        }
        let f = self.table().get_source_file_name?;
        let mut s = ptr::null_mut();
        // SAFETY: valid out-pointer.
        (unsafe { f(*self, class, &mut s) } == 0).then(|| self.take_string(s))
    }

    fn line_of(&self, frame: &FrameInfo) -> Option<i32> {
        let f = self.table().get_line_number_table?;
        let mut n = 0;
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointers; native methods return an error.
        if unsafe { f(*self, frame.method, &mut n, &mut p) } != 0 || p.is_null() {
            return None;
        }
        // SAFETY: the VM returned `n` entries.
        let table = unsafe { std::slice::from_raw_parts(p, n as usize) };
        let line = table.iter().filter(|e| e.start <= frame.location).max_by_key(|e| e.start).map(|e| e.line);
        self.deallocate(p.cast());
        line
    }

    /// Walks the objects reachable from the GC roots, calling `callbacks` with `user_data`.
    pub fn follow_references(&self, callbacks: &HeapCallbacks, user_data: *mut c_void) -> JResult<()> {
        let f = function!(self, follow_references);
        // SAFETY: the callbacks match jvmti.h and `user_data` outlives the call.
        check(unsafe { f(*self, 0, ptr::null_mut(), ptr::null_mut(), callbacks, user_data) })
    }

    /// [`Env::follow_references`], reporting only the references to instances of `klass`: the
    /// others cost HotSpot's traversal alone, not its callback machinery (which looks up four
    /// tags per reference: two thirds of a full walk's pause, measured).
    pub fn follow_references_to(
        &self,
        klass: Jobject,
        callbacks: &HeapCallbacks,
        user_data: *mut c_void,
    ) -> JResult<()> {
        let f = function!(self, follow_references);
        // SAFETY: as above; `klass` is a class reference.
        check(unsafe { f(*self, 0, klass, ptr::null_mut(), callbacks, user_data) })
    }

    /// A system property of the VM (`sun.java.command`, `java.vm.version`).
    pub fn system_property(&self, name: &CStr) -> Option<String> {
        let f = self.table().get_system_property?;
        let mut v = ptr::null_mut();
        // SAFETY: valid C string and out-pointer.
        (unsafe { f(*self, name.as_ptr(), &mut v) } == 0).then(|| self.take_string(v))
    }

    /// Releases this environment's capabilities, callbacks and tags.
    pub fn dispose(&self) {
        let Some(f) = self.table().dispose_environment else { return };
        // SAFETY: plain call; the environment is not used afterwards.
        unsafe { f(*self) };
    }
}

/// A `JavaVM*`, with jni.h's invocation table typed by `jni-sys`.
#[derive(Debug, Clone, Copy)]
pub struct Vm(*mut jni_sys::JavaVM);

// SAFETY: the JavaVM pointer is valid from any thread for the life of the VM.
unsafe impl Send for Vm {}
// SAFETY: as above.
unsafe impl Sync for Vm {}

impl Vm {
    /// Wraps the `JavaVM*` the JVM hands an agent.
    ///
    /// # Safety
    /// `vm` must be the JVM's `JavaVM*` (as `Agent_OnLoad` and `Agent_OnAttach` receive it).
    pub unsafe fn from_raw(vm: *mut c_void) -> Vm {
        Vm(vm.cast())
    }

    fn table(&self) -> &jni_sys::JNIInvokeInterface_ {
        // SAFETY: a `Vm` holds the JVM's JavaVM, whose first word is its invocation table.
        unsafe { &**self.0 }
    }

    /// `GetEnv` for a JVMTI environment of `version`.
    fn get_env(&self, version: Jint) -> Result<*mut c_void, Jint> {
        let f = self.table().GetEnv.ok_or(-1)?;
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: GetEnv of the invocation interface with a valid out-pointer.
        let rc = unsafe { f(self.0, &mut env, version) };
        if rc != 0 || env.is_null() {
            return Err(rc);
        }
        Ok(env)
    }

    /// Attaches the calling thread as a daemon and returns its `JNIEnv*`.
    pub fn attach_daemon(&self) -> Option<Jni> {
        let f = self.table().AttachCurrentThreadAsDaemon?;
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: AttachCurrentThreadAsDaemon with default arguments.
        let rc = unsafe { f(self.0, &mut env, ptr::null_mut()) };
        (rc == 0 && !env.is_null()).then_some(Jni(env.cast()))
    }

    /// Detaches the calling thread.
    pub fn detach(&self) {
        if let Some(f) = self.table().DetachCurrentThread {
            // SAFETY: the calling thread attached itself.
            unsafe { f(self.0) };
        }
    }
}

/// A `JNIEnv*` of the calling thread, with jni.h's function table typed by `jni-sys`.
#[derive(Debug, Clone, Copy)]
pub struct Jni(*mut jni_sys::JNIEnv);

/// The function `$f` of a JNI table, or a return (of `$none`, when given) from the enclosing function.
macro_rules! jni_fn {
    ($jni:expr, $f:ident) => {
        match $jni.table().$f {
            Some(f) => f,
            None => return,
        }
    };
    ($jni:expr, $f:ident, $none:expr) => {
        match $jni.table().$f {
            Some(f) => f,
            None => return $none,
        }
    };
}

impl Jni {
    /// Wraps the `JNIEnv*` the JVM passed a native method or an event callback.
    ///
    /// # Safety
    /// `env` must be the calling thread's `JNIEnv*`, and the `Jni` used on that thread only.
    pub unsafe fn from_raw(env: *mut c_void) -> Jni {
        Jni(env.cast())
    }

    fn table(&self) -> &jni_sys::JNINativeInterface_ {
        // SAFETY: a `Jni` holds a JNIEnv, whose first word is its function table.
        unsafe { &**self.0 }
    }

    /// `FindClass`, clearing any exception.
    pub fn find_class(&self, name: &CStr) -> Option<Jobject> {
        let f = jni_fn!(self, FindClass, None);
        // SAFETY: valid C string.
        let c = unsafe { f(self.0, name.as_ptr()) };
        self.clear_exception();
        (!c.is_null()).then_some(c.cast())
    }

    /// `IsAssignableFrom(sub, sup)`.
    pub fn is_assignable(&self, sub: Jobject, sup: Jobject) -> bool {
        let f = jni_fn!(self, IsAssignableFrom, false);
        // SAFETY: both are class references.
        unsafe { f(self.0, sub.cast(), sup.cast()) != 0 }
    }

    /// `NewGlobalRef`.
    pub fn new_global(&self, o: Jobject) -> Jobject {
        let f = jni_fn!(self, NewGlobalRef, ptr::null_mut());
        // SAFETY: valid reference.
        unsafe { f(self.0, o.cast()) }.cast()
    }

    /// `DeleteLocalRef`.
    pub fn delete_local(&self, o: Jobject) {
        if o.is_null() {
            return;
        }
        let f = jni_fn!(self, DeleteLocalRef);
        // SAFETY: a local reference of this thread.
        unsafe { f(self.0, o.cast()) }
    }

    /// `PushLocalFrame`: local references made until the matching pop are freed together.
    pub fn push_local_frame(&self, capacity: Jint) -> bool {
        let f = jni_fn!(self, PushLocalFrame, false);
        // SAFETY: plain call.
        unsafe { f(self.0, capacity) == 0 }
    }

    /// `PopLocalFrame`.
    pub fn pop_local_frame(&self) {
        let f = jni_fn!(self, PopLocalFrame);
        // SAFETY: pairs with a successful push.
        unsafe { f(self.0, ptr::null_mut()) };
    }

    /// `GetObjectClass`.
    pub fn object_class(&self, o: Jobject) -> Jobject {
        let f = jni_fn!(self, GetObjectClass, ptr::null_mut());
        // SAFETY: a valid, non-null reference.
        unsafe { f(self.0, o.cast()) }.cast()
    }

    /// `GetSuperclass` (null for `java.lang.Object` and interfaces).
    pub fn superclass(&self, class: Jobject) -> Jobject {
        let f = jni_fn!(self, GetSuperclass, ptr::null_mut());
        // SAFETY: a class reference.
        unsafe { f(self.0, class.cast()) }.cast()
    }

    /// `GetObjectField` (`GetStaticObjectField` for a static field, of `o` as its class): a
    /// local reference, or null.
    pub fn object_field(&self, o: Jobject, field: &FieldInfo) -> Jobject {
        if field.is_static {
            let f = jni_fn!(self, GetStaticObjectField, ptr::null_mut());
            // SAFETY: `o` is the class declaring the static reference field `field`.
            unsafe { f(self.0, o.cast(), field.id.cast()) }.cast()
        } else {
            let f = jni_fn!(self, GetObjectField, ptr::null_mut());
            // SAFETY: `o` is an instance of a class declaring (or inheriting) reference field `field`.
            unsafe { f(self.0, o.cast(), field.id.cast()) }.cast()
        }
    }

    /// `IsSameObject`.
    pub fn same(&self, a: Jobject, b: Jobject) -> bool {
        let f = jni_fn!(self, IsSameObject, false);
        // SAFETY: valid (possibly null) references.
        unsafe { f(self.0, a.cast(), b.cast()) != 0 }
    }

    /// `GetArrayLength`.
    pub fn array_length(&self, array: Jobject) -> Jint {
        let f = jni_fn!(self, GetArrayLength, 0);
        // SAFETY: an array reference.
        unsafe { f(self.0, array.cast()) }
    }

    /// `GetObjectArrayElement`: a local reference, or null (an index out of bounds raises an
    /// exception, which is cleared).
    pub fn array_element(&self, array: Jobject, index: Jint) -> Jobject {
        let f = jni_fn!(self, GetObjectArrayElement, ptr::null_mut());
        // SAFETY: an object array reference; a bad index only raises an exception.
        let o = unsafe { f(self.0, array.cast(), index) };
        self.clear_exception();
        o.cast()
    }

    /// `NewWeakGlobalRef`: a reference that does not keep `o` alive.
    pub fn new_weak(&self, o: Jobject) -> Jobject {
        let f = jni_fn!(self, NewWeakGlobalRef, ptr::null_mut());
        // SAFETY: a valid reference.
        unsafe { f(self.0, o.cast()) }.cast()
    }

    /// `DeleteWeakGlobalRef`.
    pub fn delete_weak(&self, o: Jobject) {
        if o.is_null() {
            return;
        }
        let f = jni_fn!(self, DeleteWeakGlobalRef);
        // SAFETY: a weak global reference made by `new_weak`.
        unsafe { f(self.0, o.cast()) }
    }

    /// `NewLocalRef` of a weak reference: null once its object is collected.
    pub fn local_of_weak(&self, weak: Jobject) -> Jobject {
        let f = jni_fn!(self, NewLocalRef, ptr::null_mut());
        // SAFETY: a weak global reference.
        unsafe { f(self.0, weak.cast()) }.cast()
    }

    /// `NewStringUTF`; null (with the exception cleared) if the VM is out of memory.
    pub fn new_string(&self, s: &str) -> Jobject {
        let text = std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default();
        let f = jni_fn!(self, NewStringUTF, ptr::null_mut());
        // SAFETY: a NUL-terminated string (ASCII or UTF-8 without NUL: valid modified UTF-8
        // for the characters a source location holds).
        let r = unsafe { f(self.0, text.as_ptr()) };
        if r.is_null() {
            self.clear_exception();
        }
        r.cast()
    }

    /// `RegisterNatives` for `(name, signature, function)` triples; false on failure.
    pub fn register_natives(&self, class: Jobject, methods: &[(&CStr, &CStr, *const c_void)]) -> bool {
        let table: Vec<jni_sys::JNINativeMethod> = methods
            .iter()
            .map(|(n, s, f)| jni_sys::JNINativeMethod {
                name: n.as_ptr().cast_mut(),
                signature: s.as_ptr().cast_mut(),
                fnPtr: f.cast_mut(),
            })
            .collect();
        let f = jni_fn!(self, RegisterNatives, false);
        // SAFETY: the table and its strings outlive the call.
        let rc = unsafe { f(self.0, class.cast(), table.as_ptr(), table.len() as Jint) };
        self.clear_exception();
        rc == 0
    }

    /// Sets a static boolean field (`GetStaticFieldID` initializes the class if needed).
    pub fn set_static_boolean(&self, class: Jobject, name: &CStr, value: bool) -> bool {
        let id = jni_fn!(self, GetStaticFieldID, false);
        // SAFETY: valid class and C strings.
        let field = unsafe { id(self.0, class.cast(), name.as_ptr(), c"Z".as_ptr()) };
        if field.is_null() {
            self.clear_exception();
            return false;
        }
        let set = jni_fn!(self, SetStaticBooleanField, false);
        // SAFETY: `field` is a static boolean field of `class`.
        unsafe { set(self.0, class.cast(), field, u8::from(value)) };
        true
    }

    /// Writes an HPROF dump of this JVM's heap to `path` (which must end in `.hprof` and not
    /// exist) with `HotSpotDiagnosticMXBean.dumpHeap`, live objects only when `live` (the JVM
    /// collects first). The error is the Java exception's text.
    pub fn dump_heap(&self, path: &str, live: bool) -> Result<(), String> {
        if !self.push_local_frame(16) {
            return Err("no room for local references".into());
        }
        let r = self.dump_heap_in_frame(path, live);
        self.pop_local_frame();
        r
    }

    fn dump_heap_in_frame(&self, path: &str, live: bool) -> Result<(), String> {
        let factory = self.find_class(c"java/lang/management/ManagementFactory").ok_or("no java.lang.management")?;
        let bean_class =
            self.find_class(c"com/sun/management/HotSpotDiagnosticMXBean").ok_or("no HotSpotDiagnosticMXBean")?;
        let static_id = jni_fn!(self, GetStaticMethodID, Err("JNI".into()));
        let method_id = jni_fn!(self, GetMethodID, Err("JNI".into()));
        let call_static = jni_fn!(self, CallStaticObjectMethodA, Err("JNI".into()));
        let call_void = jni_fn!(self, CallVoidMethodA, Err("JNI".into()));
        // SAFETY: valid class references and C strings; the argument arrays match the
        // signatures; every call's exception is checked before the next.
        unsafe {
            let get = static_id(
                self.0,
                factory.cast(),
                c"getPlatformMXBean".as_ptr(),
                c"(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;".as_ptr(),
            );
            self.exception("ManagementFactory.getPlatformMXBean")?;
            let bean = call_static(self.0, factory.cast(), get, [jni_sys::jvalue { l: bean_class.cast() }].as_ptr());
            self.exception("getPlatformMXBean")?;
            if bean.is_null() {
                return Err("this JVM has no HotSpotDiagnosticMXBean".into());
            }
            let dump = method_id(self.0, bean_class.cast(), c"dumpHeap".as_ptr(), c"(Ljava/lang/String;Z)V".as_ptr());
            self.exception("HotSpotDiagnosticMXBean.dumpHeap")?;
            let file = self.new_string(path);
            if file.is_null() {
                return Err("out of memory".into());
            }
            let args = [jni_sys::jvalue { l: file.cast() }, jni_sys::jvalue { z: u8::from(live) }];
            call_void(self.0, bean, dump, args.as_ptr());
            self.exception("dumpHeap")
        }
    }

    /// Bytes of the Java heap in use (`Runtime.totalMemory() - Runtime.freeMemory()`: right
    /// after a collection, about the live heap) and the most it may hold
    /// (`Runtime.maxMemory()`, `-Xmx`); none if the calls fail.
    pub fn heap_used(&self) -> Option<(u64, u64)> {
        if !self.push_local_frame(8) {
            return None;
        }
        let used = self.heap_used_in_frame();
        self.pop_local_frame();
        used
    }

    fn heap_used_in_frame(&self) -> Option<(u64, u64)> {
        let runtime = self.find_class(c"java/lang/Runtime")?;
        let static_id = jni_fn!(self, GetStaticMethodID, None);
        let method_id = jni_fn!(self, GetMethodID, None);
        let call_static = jni_fn!(self, CallStaticObjectMethodA, None);
        let call_long = jni_fn!(self, CallLongMethodA, None);
        // SAFETY: valid class reference and C strings; no arguments; every call's exception
        // is checked before the next.
        unsafe {
            let get = static_id(self.0, runtime.cast(), c"getRuntime".as_ptr(), c"()Ljava/lang/Runtime;".as_ptr());
            self.exception("Runtime.getRuntime").ok()?;
            let rt = call_static(self.0, runtime.cast(), get, ptr::null());
            self.exception("getRuntime").ok()?;
            let total = method_id(self.0, runtime.cast(), c"totalMemory".as_ptr(), c"()J".as_ptr());
            let free = method_id(self.0, runtime.cast(), c"freeMemory".as_ptr(), c"()J".as_ptr());
            self.exception("Runtime.totalMemory").ok()?;
            if rt.is_null() || total.is_null() || free.is_null() {
                return None;
            }
            let t = call_long(self.0, rt, total, ptr::null());
            let f = call_long(self.0, rt, free, ptr::null());
            self.exception("totalMemory").ok()?;
            let max = method_id(self.0, runtime.cast(), c"maxMemory".as_ptr(), c"()J".as_ptr());
            self.exception("Runtime.maxMemory").ok()?;
            if max.is_null() {
                return None;
            }
            let m = call_long(self.0, rt, max, ptr::null());
            self.exception("maxMemory").ok()?;
            Some((t.saturating_sub(f).max(0) as u64, m.max(0) as u64))
        }
    }

    /// The pending exception's text (`Throwable.toString`), cleared, as an error of `what`.
    fn exception(&self, what: &str) -> Result<(), String> {
        let occurred = jni_fn!(self, ExceptionOccurred, Ok(()));
        // SAFETY: plain call.
        let e = unsafe { occurred(self.0) };
        if e.is_null() {
            return Ok(());
        }
        self.clear_exception();
        let text = self.text_of(e.cast()).unwrap_or_else(|| "an exception".into());
        self.delete_local(e.cast());
        Err(format!("{what}: {text}"))
    }

    /// `o.toString()`, or none if it throws.
    fn text_of(&self, o: Jobject) -> Option<String> {
        let object = self.find_class(c"java/lang/Object")?;
        let method_id = jni_fn!(self, GetMethodID, None);
        let call = jni_fn!(self, CallObjectMethodA, None);
        let chars = jni_fn!(self, GetStringUTFChars, None);
        let release = jni_fn!(self, ReleaseStringUTFChars, None);
        // SAFETY: `o` is a valid reference, the method exists on every object, and the string's
        // UTF chars are released after they are copied.
        unsafe {
            let m = method_id(self.0, object.cast(), c"toString".as_ptr(), c"()Ljava/lang/String;".as_ptr());
            self.delete_local(object);
            let s = call(self.0, o.cast(), m, std::ptr::null());
            if s.is_null() {
                self.clear_exception();
                return None;
            }
            let p = chars(self.0, s, std::ptr::null_mut());
            let text = (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned());
            if !p.is_null() {
                release(self.0, s, p);
            }
            self.delete_local(s.cast());
            text
        }
    }

    fn clear_exception(&self) {
        let f = jni_fn!(self, ExceptionClear);
        // SAFETY: plain call.
        unsafe { f(self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_match_jvmti_h() {
        let slot = |n: usize| (n - 1) * std::mem::size_of::<usize>();
        use std::mem::offset_of;
        assert_eq!(offset_of!(JvmtiInterface, set_event_notification_mode), slot(2));
        assert_eq!(offset_of!(JvmtiInterface, allocate), slot(46));
        assert_eq!(offset_of!(JvmtiInterface, deallocate), slot(47));
        assert_eq!(offset_of!(JvmtiInterface, get_class_signature), slot(48));
        assert_eq!(offset_of!(JvmtiInterface, get_source_file_name), slot(50));
        assert_eq!(offset_of!(JvmtiInterface, get_class_fields), slot(53));
        assert_eq!(offset_of!(JvmtiInterface, get_implemented_interfaces), slot(54));
        assert_eq!(offset_of!(JvmtiInterface, get_field_name), slot(60));
        assert_eq!(offset_of!(JvmtiInterface, get_field_modifiers), slot(62));
        assert_eq!(offset_of!(JvmtiInterface, get_objects_with_tags), slot(114));
        assert_eq!(offset_of!(JvmtiInterface, get_object_size), slot(154));
        assert_eq!(offset_of!(JvmtiInterface, get_method_name), slot(64));
        assert_eq!(offset_of!(JvmtiInterface, get_method_declaring_class), slot(65));
        assert_eq!(offset_of!(JvmtiInterface, get_line_number_table), slot(70));
        assert_eq!(offset_of!(JvmtiInterface, get_loaded_classes), slot(78));
        assert_eq!(offset_of!(JvmtiInterface, get_stack_trace), slot(104));
        assert_eq!(offset_of!(JvmtiInterface, get_tag), slot(106));
        assert_eq!(offset_of!(JvmtiInterface, set_tag), slot(107));
        assert_eq!(offset_of!(JvmtiInterface, follow_references), slot(115));
        assert_eq!(offset_of!(JvmtiInterface, set_event_callbacks), slot(122));
        assert_eq!(offset_of!(JvmtiInterface, dispose_environment), slot(127));
        assert_eq!(offset_of!(JvmtiInterface, get_system_property), slot(131));
        assert_eq!(offset_of!(JvmtiInterface, get_potential_capabilities), slot(140));
        assert_eq!(offset_of!(JvmtiInterface, add_capabilities), slot(142));
        assert_eq!(offset_of!(JvmtiInterface, add_to_bootstrap_class_loader_search), slot(149));
        assert_eq!(offset_of!(JvmtiInterface, retransform_classes), slot(152));
        assert_eq!(offset_of!(JvmtiInterface, set_heap_sampling_interval), slot(156));
    }
}
