//! The heap description and its HPROF encoding.

use heap::VmLayout;
use hprof::layout::{ClassDumpHead, InstanceHead, LoadClass, ObjArrayHead, PrimArrayHead, StackFrame, StackTraceHead};
use hprof::{
    tag, BasicType, ClassDump, FieldDecl, Header, IdSize, Root, RootKind, StaticField, SubRecord, Value, Version,
    Writer,
};

/// A class declared in a [`HeapBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassRef(usize);

/// An object declared in a [`HeapBuilder`]; its address is its id in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjRef(pub u64);

/// A thread declared in a [`HeapBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadRef {
    /// HPROF thread serial.
    pub serial: u32,
    /// The `java.lang.Thread` object.
    pub object: ObjRef,
}

#[derive(Debug, Clone)]
struct ClassSpec {
    id: u64,
    jvm_name: String,
    super_class: Option<usize>,
    fields: Vec<(String, BasicType)>,
    statics: Vec<(String, Value)>,
    /// Bytes the VM adds beyond the listed fields (injected fields, @Contended padding).
    hidden_bytes: u64,
    /// Android: bytes of the overhead pseudo-array written just before the class.
    overhead: Option<u32>,
}

#[derive(Debug, Clone)]
enum Body {
    Instance {
        class: usize,
        values: Vec<Value>,
    },
    ObjArray {
        class: usize,
        elements: Vec<u64>,
    },
    /// The contents, big-endian as in the dump; zeros when `None`.
    PrimArray {
        elem: BasicType,
        len: u32,
        data: Option<Vec<u8>>,
    },
}

#[derive(Debug, Clone)]
struct ObjSpec {
    addr: u64,
    body: Body,
    /// Android: the heap (id, name) it was declared in.
    heap: Option<(u32, String)>,
}

/// Declares classes, objects, references, roots and threads, then writes them as HPROF.
#[derive(Debug, Clone)]
pub struct HeapBuilder {
    id_size: IdSize,
    layout: VmLayout,
    classes: Vec<ClassSpec>,
    objects: Vec<ObjSpec>,
    roots: Vec<Root>,
    strings: Vec<String>,
    /// Position of each string in `strings`: heaps of many classes have many names.
    string_at: std::collections::HashMap<String, usize>,
    frames: Vec<StackFrame>,
    traces: Vec<(StackTraceHead, Vec<u64>)>,
    next_addr: u64,
    next_class_id: u64,
    segment_bytes: usize,
    version: Version,
    unsegmented: bool,
    heap: Option<(u32, String)>,
    /// Threads of a parallel dump, and the objects of each region they take turns at.
    threads: (usize, usize),
}

impl Default for HeapBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Where objects start; class mirrors live below.
const HEAP_BASE: u64 = 0x1000_0000;

impl HeapBuilder {
    /// A 64-bit heap with HotSpot's default layout (compressed oops and class pointers).
    pub fn new() -> Self {
        Self::with_layout(IdSize::Eight, VmLayout::DEFAULT_64)
    }

    /// A heap with the given identifier size and object layout.
    pub fn with_layout(id_size: IdSize, layout: VmLayout) -> Self {
        let mut h = HeapBuilder {
            id_size,
            layout,
            classes: Vec::new(),
            objects: Vec::new(),
            roots: Vec::new(),
            strings: Vec::new(),
            string_at: std::collections::HashMap::new(),
            frames: Vec::new(),
            traces: Vec::new(),
            next_addr: HEAP_BASE,
            next_class_id: 0x0800_0000,
            segment_bytes: 1 << 20,
            version: Version::V102,
            unsegmented: false,
            heap: None,
            threads: (1, 1),
        };
        h.class_jvm("java/lang/Object", None, &[]);
        h
    }

    /// Splits the heap dump into segments of about `bytes` each (default 1 MiB).
    pub fn segment_bytes(&mut self, bytes: usize) -> &mut Self {
        self.segment_bytes = bytes.max(1);
        self
    }

    /// Writes the header of another HPROF version (1.0.1 and 1.0.3 dumps exist in the wild).
    pub fn version(&mut self, v: Version) -> &mut Self {
        self.version = v;
        self
    }

    /// Writes the objects as a parallel dump of `threads` threads does (JDK 21 and later): the
    /// heap in regions of `region` objects, taken by the threads in turn, each thread's in
    /// address order, and the threads' parts one after the other; so the file holds one
    /// ascending run of objects per thread.
    pub fn parallel(&mut self, threads: usize, region: usize) -> &mut Self {
        self.threads = (threads.max(1), region.max(1));
        self
    }

    /// Writes one unsegmented HEAP DUMP (0x0C) record instead of segments, as old JDKs did.
    pub fn unsegmented(&mut self) -> &mut Self {
        self.unsegmented = true;
        self
    }

    /// Android: objects declared from now on are in the heap `id` named `name` (ART's
    /// `'A'` app, `'Z'` zygote, `'I'` image); a HEAP DUMP INFO is written where the heap
    /// changes, and, as Dalvik and ART do not always repeat it, not at each segment's start.
    pub fn heap(&mut self, id: u32, name: &str) -> &mut Self {
        self.heap = Some((id, name.to_owned()));
        self
    }

    /// Android: the class object embeds `bytes` beyond `java.lang.Class`'s fields, which ART
    /// writes as a `byte[]` with the class id + 1 just before the class, pointed at by a
    /// `$classOverhead` static.
    pub fn class_overhead(&mut self, class: ClassRef, bytes: u32) {
        let id = self.classes[class.0].id + 1;
        self.classes[class.0].overhead = Some(bytes);
        self.classes[class.0].statics.push(("$classOverhead".to_owned(), Value::Object(id)));
    }

    /// `java.lang.Object`.
    pub fn object_class(&self) -> ClassRef {
        ClassRef(0)
    }

    /// Declares a class by Java name (`com.example.Node`); `None` as super means `java.lang.Object`.
    pub fn class(&mut self, java_name: &str, super_class: Option<ClassRef>, fields: &[(&str, BasicType)]) -> ClassRef {
        let sup = Some(super_class.unwrap_or(ClassRef(0)));
        self.class_jvm(&java_name.replace('.', "/"), sup, fields)
    }

    /// Declares a class by its JVM name (`java/lang/String`, `[Ljava/lang/Object;`).
    pub fn class_jvm(
        &mut self,
        jvm_name: &str,
        super_class: Option<ClassRef>,
        fields: &[(&str, BasicType)],
    ) -> ClassRef {
        let id = self.next_class_id;
        self.next_class_id += 0x100;
        self.classes.push(ClassSpec {
            id,
            jvm_name: jvm_name.to_owned(),
            super_class: super_class.map(|c| c.0),
            fields: fields.iter().map(|(n, t)| ((*n).to_owned(), *t)).collect(),
            statics: Vec::new(),
            hidden_bytes: 0,
            overhead: None,
        });
        ClassRef(self.classes.len() - 1)
    }

    /// Makes instances of `class` this many bytes bigger than their fields say, as the VM
    /// does with injected fields and `@Contended` padding. Declare before creating instances.
    pub fn hidden_bytes(&mut self, class: ClassRef, bytes: u64) {
        self.classes[class.0].hidden_bytes = bytes;
    }

    /// The class's object id.
    pub fn class_id(&self, class: ClassRef) -> u64 {
        self.classes[class.0].id
    }

    /// Adds a static field holding `target` (or null).
    pub fn static_ref(&mut self, class: ClassRef, name: &str, target: Option<ObjRef>) {
        self.classes[class.0].statics.push((name.to_owned(), Value::Object(target.map_or(0, |o| o.0))));
    }

    /// Adds a static primitive field.
    pub fn static_prim(&mut self, class: ClassRef, name: &str, ty: BasicType, raw: u64) {
        self.classes[class.0].statics.push((name.to_owned(), Value::Primitive(ty, raw)));
    }

    /// The array class named by JVM name, declared on first use.
    pub fn array_class(&mut self, jvm_name: &str) -> ClassRef {
        match self.classes.iter().position(|c| c.jvm_name == jvm_name) {
            Some(i) => ClassRef(i),
            None => self.class_jvm(jvm_name, Some(ClassRef(0)), &[]),
        }
    }

    fn chain(&self, class: usize) -> Vec<usize> {
        std::iter::successors(Some(class), |&c| self.classes[c].super_class).collect()
    }

    fn alloc(&mut self, bytes: u64) -> u64 {
        let addr = self.next_addr;
        self.next_addr += bytes;
        addr
    }

    /// A new instance with null and zero fields.
    pub fn instance(&mut self, class: ClassRef) -> ObjRef {
        let chain = self.chain(class.0);
        let fields: Vec<BasicType> = chain.iter().flat_map(|&c| self.classes[c].fields.iter().map(|f| f.1)).collect();
        let field_bytes: u64 = fields.iter().map(|&t| u64::from(self.layout.value_bytes(t))).sum();
        let hidden = chain.iter().map(|&c| self.classes[c].hidden_bytes).sum::<u64>();
        let size = self.layout.instance_bytes(field_bytes) + hidden;
        let values = fields
            .iter()
            .map(|&t| if t == BasicType::Object { Value::Object(0) } else { Value::Primitive(t, 0) })
            .collect();
        let addr = self.alloc(size);
        self.objects.push(ObjSpec { addr, body: Body::Instance { class: class.0, values }, heap: self.heap.clone() });
        ObjRef(addr)
    }

    /// Leaves `bytes` of free space before the next object (a region's unused tail).
    pub fn gap(&mut self, bytes: u64) {
        self.next_addr += bytes;
    }

    fn slot(&self, obj: ObjRef, field: &str) -> (usize, usize) {
        let o = self.objects.iter().position(|o| o.addr == obj.0).expect("testkit: no such object");
        let Body::Instance { class, .. } = &self.objects[o].body else { panic!("testkit: {field} set on an array") };
        let names = self.chain(*class).into_iter().flat_map(|c| self.classes[c].fields.iter().map(|f| f.0.as_str()));
        let i = names
            .collect::<Vec<_>>()
            .iter()
            .position(|n| *n == field)
            .unwrap_or_else(|| panic!("testkit: no field {field}"));
        (o, i)
    }

    /// Points reference field `field` of `obj` at `target`.
    pub fn set(&mut self, obj: ObjRef, field: &str, target: ObjRef) {
        self.set_value(obj, field, |_| Value::Object(target.0));
    }

    /// Sets primitive field `field` of `obj` to the raw bits `raw`.
    pub fn set_prim(&mut self, obj: ObjRef, field: &str, raw: u64) {
        self.set_value(obj, field, |v| Value::Primitive(v.ty(), raw));
    }

    fn set_value(&mut self, obj: ObjRef, field: &str, f: impl FnOnce(Value) -> Value) {
        let (o, i) = self.slot(obj, field);
        if let Body::Instance { values, .. } = &mut self.objects[o].body {
            values[i] = f(values[i]);
        }
    }

    /// A new array of references of the array class `jvm_name` (`[Ljava/lang/Object;`).
    pub fn object_array(&mut self, jvm_name: &str, elements: &[Option<ObjRef>]) -> ObjRef {
        let class = self.array_class(jvm_name);
        let size = self.layout.array_bytes(BasicType::Object, elements.len() as u64);
        let addr = self.alloc(size);
        let elements = elements.iter().map(|e| e.map_or(0, |o| o.0)).collect();
        self.objects.push(ObjSpec { addr, body: Body::ObjArray { class: class.0, elements }, heap: self.heap.clone() });
        ObjRef(addr)
    }

    /// A new zero-filled array of `len` primitives.
    pub fn primitive_array(&mut self, elem: BasicType, len: u32) -> ObjRef {
        self.array_class(&format!("[{}", elem.descriptor()));
        let addr = self.alloc(self.layout.array_bytes(elem, u64::from(len)));
        self.objects.push(ObjSpec { addr, body: Body::PrimArray { elem, len, data: None }, heap: self.heap.clone() });
        ObjRef(addr)
    }

    /// A `java.lang.String` of JDK 9 and later holding `text` as Latin-1 (`coder` 0) in a
    /// `byte[]`; the class is declared on first use.
    pub fn string_object(&mut self, text: &str) -> ObjRef {
        let class = match self.classes.iter().position(|c| c.jvm_name == "java/lang/String") {
            Some(i) => ClassRef(i),
            None => self.class("java.lang.String", None, &[("value", BasicType::Object), ("coder", BasicType::Byte)]),
        };
        let bytes: Vec<u8> = text.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect();
        let value = self.primitive_array(BasicType::Byte, bytes.len() as u32);
        if let Some(ObjSpec { body: Body::PrimArray { data, .. }, .. }) = self.objects.last_mut() {
            *data = Some(bytes);
        }
        let string = self.instance(class);
        self.set(string, "value", value);
        string
    }

    /// Declares a GC root of `kind` holding `obj` (for thread roots, prefer [`Self::thread`]).
    pub fn root(&mut self, kind: RootKind, obj: ObjRef) {
        self.roots.push(Root {
            kind,
            object_id: obj.0,
            thread_serial: None,
            frame: None,
            stack_serial: None,
            ref_id: None,
        });
    }

    /// A root on any id, including ids that are no object (for dangling-root tests).
    pub fn root_id(&mut self, kind: RootKind, id: u64) {
        self.roots.push(Root {
            kind,
            object_id: id,
            thread_serial: None,
            frame: None,
            stack_serial: None,
            ref_id: None,
        });
    }

    /// A sticky-class root for `class` (a system class).
    pub fn sticky_class(&mut self, class: ClassRef) {
        let id = self.classes[class.0].id;
        self.root_id(RootKind::StickyClass, id);
    }

    /// A live thread with a stack of `(class, method, source file, line)` frames, innermost first.
    pub fn thread(&mut self, thread_class: ClassRef, frames: &[(&str, &str, &str, u32)]) -> ThreadRef {
        let object = self.instance(thread_class);
        let serial = self.traces.len() as u32 + 1;
        let mut ids = Vec::new();
        for (class, method, file, line) in frames {
            let frame_id = 0x7000_0000 + self.frames.len() as u64 * 8;
            let class_serial =
                self.classes.iter().position(|c| c.jvm_name == class.replace('.', "/")).map_or(0, |i| i as u32 + 1);
            let f = StackFrame {
                frame_id,
                method_name_id: self.string(method),
                signature_id: self.string("()V"),
                source_file_id: self.string(file),
                class_serial,
                line: *line as i32,
            };
            self.frames.push(f);
            ids.push(frame_id);
        }
        self.traces.push((StackTraceHead { serial, thread_serial: serial, frame_count: ids.len() as u32 }, ids));
        self.roots.push(Root {
            kind: RootKind::ThreadObject,
            object_id: object.0,
            thread_serial: Some(serial),
            frame: None,
            stack_serial: Some(serial),
            ref_id: None,
        });
        ThreadRef { serial, object }
    }

    /// A local variable of `thread`'s frame at `depth` (0 = innermost) holding `obj`.
    pub fn frame_root(&mut self, thread: ThreadRef, depth: u32, obj: ObjRef) {
        self.roots.push(Root {
            kind: RootKind::JavaFrame,
            object_id: obj.0,
            thread_serial: Some(thread.serial),
            frame: Some(depth),
            stack_serial: None,
            ref_id: None,
        });
    }

    fn string(&mut self, s: &str) -> u64 {
        let i = match self.string_at.get(s) {
            Some(&i) => i,
            None => {
                self.strings.push(s.to_owned());
                self.string_at.insert(s.to_owned(), self.strings.len() - 1);
                self.strings.len() - 1
            }
        };
        0x6000_0000 + i as u64 * 8
    }

    /// The JVM size the builder gave `obj` (what a correct reader must report).
    pub fn size_of(&self, obj: ObjRef) -> u64 {
        let i = self.objects.iter().position(|o| o.addr == obj.0).expect("testkit: no such object");
        self.objects.get(i + 1).map_or(self.next_addr, |n| n.addr) - obj.0
    }

    /// Writes the dump: header, strings, classes, traces, then segmented heap data.
    pub fn build(&self) -> Vec<u8> {
        let mut me = self.clone();
        for c in 0..me.classes.len() {
            me.string(&me.classes[c].jvm_name.clone());
            for f in me.classes[c].fields.clone() {
                me.string(&f.0);
            }
            for s in me.classes[c].statics.clone() {
                me.string(&s.0);
            }
        }
        for name in me.objects.iter().filter_map(|o| o.heap.clone()).map(|h| h.1).collect::<Vec<_>>() {
            me.string(&name);
        }
        let mut w = Writer::new(me.id_size);
        Header { version: me.version, id_size: me.id_size, timestamp_ms: 1_700_000_000_000, len: 31 }.write(&mut w);
        for (i, s) in me.strings.iter().enumerate() {
            let mut body = Writer::new(me.id_size);
            body.id(0x6000_0000 + i as u64 * 8);
            body.bytes(s.as_bytes());
            hprof::write_record(&mut w, tag::UTF8, &body.buf);
        }
        for (i, c) in me.classes.iter().enumerate() {
            let mut body = Writer::new(me.id_size);
            LoadClass { serial: i as u32 + 1, class_id: c.id, stack_serial: 0, name_id: me.lookup(&c.jvm_name) }
                .write(&mut body);
            hprof::write_record(&mut w, tag::LOAD_CLASS, &body.buf);
        }
        for f in &me.frames {
            let mut body = Writer::new(me.id_size);
            f.write(&mut body);
            hprof::write_record(&mut w, tag::STACK_FRAME, &body.buf);
        }
        for (head, ids) in &me.traces {
            let mut body = Writer::new(me.id_size);
            head.write(&mut body);
            ids.iter().for_each(|&id| body.id(id));
            hprof::write_record(&mut w, tag::STACK_TRACE, &body.buf);
        }
        me.write_heap(&mut w);
        w.buf
    }

    fn lookup(&self, s: &str) -> u64 {
        0x6000_0000 + self.string_at.get(s).copied().unwrap_or(0) as u64 * 8
    }

    fn write_heap(&self, w: &mut Writer) {
        let overhead: Vec<Vec<u8>> = self
            .classes
            .iter()
            .filter_map(|c| {
                let len = c.overhead?;
                let mut b = Writer::new(self.id_size);
                let object_id = c.id + 1;
                let head = PrimArrayHead { object_id, stack_serial: 0, length: len, elem_type: BasicType::Byte.code() };
                let data = vec![0u8; len as usize];
                SubRecord::PrimArray { head, elem: BasicType::Byte, data: &data }.write(&mut b);
                SubRecord::Class(Box::new(self.class_dump(c))).write(&mut b);
                Some(b.buf)
            })
            .collect();
        let mut subs: Vec<SubRecord<'_>> = Vec::new();
        subs.extend(
            self.classes
                .iter()
                .filter(|c| c.overhead.is_none())
                .map(|c| SubRecord::Class(Box::new(self.class_dump(c)))),
        );
        subs.extend(self.roots.iter().map(|r| SubRecord::Root(*r)));
        let mut bodies = Vec::new();
        let mut heap = None;
        let (threads, region) = self.threads;
        let mut order: Vec<(usize, &ObjSpec)> = self.objects.iter().enumerate().collect();
        order.sort_by_key(|&(at, _)| (at / region % threads, at));
        for (_, o) in order {
            let mut b = Writer::new(self.id_size);
            if o.heap != heap {
                if let Some((heap_id, name)) = &o.heap {
                    let info = hprof::layout::HeapDumpInfo { heap_id: *heap_id, name_id: self.lookup(name) };
                    SubRecord::HeapDumpInfo(info).write(&mut b);
                }
                heap = o.heap.clone();
            }
            self.write_object(o, &mut b);
            bodies.push(b.buf);
        }
        let mut seg = Writer::new(self.id_size);
        overhead.iter().for_each(|b| seg.bytes(b));
        for s in &subs {
            s.write(&mut seg);
        }
        if self.unsegmented {
            bodies.iter().for_each(|b| seg.bytes(b));
            hprof::write_record(w, tag::HEAP_DUMP, &seg.buf);
            return;
        }
        for b in bodies {
            if seg.buf.len() + b.len() > self.segment_bytes && !seg.buf.is_empty() {
                hprof::write_record(w, tag::HEAP_DUMP_SEGMENT, &seg.buf);
                seg.buf.clear();
            }
            seg.bytes(&b);
        }
        if !seg.buf.is_empty() {
            hprof::write_record(w, tag::HEAP_DUMP_SEGMENT, &seg.buf);
        }
        hprof::write_record(w, tag::HEAP_DUMP_END, &[]);
    }

    fn class_dump(&self, c: &ClassSpec) -> ClassDump {
        let dump_bytes: usize = self
            .chain(self.classes.iter().position(|x| x.id == c.id).unwrap_or(0))
            .iter()
            .flat_map(|&k| self.classes[k].fields.iter())
            .map(|f| f.1.dump_bytes(self.id_size))
            .sum();
        // Android declares the runtime's size, header included and unaligned; HotSpot the
        // fields' bytes with ids at the dump's id size.
        let instance_size = match self.version {
            Version::V103 => {
                let fields = self.chain(self.classes.iter().position(|x| x.id == c.id).unwrap_or(0));
                let bytes: u64 = fields
                    .iter()
                    .flat_map(|&k| self.classes[k].fields.iter())
                    .map(|f| u64::from(self.layout.value_bytes(f.1)))
                    .sum();
                (u64::from(self.layout.header_bytes) + bytes) as u32
            }
            _ => dump_bytes as u32,
        };
        ClassDump {
            head: ClassDumpHead {
                class_id: c.id,
                super_id: c.super_class.map_or(0, |s| self.classes[s].id),
                instance_size,
                ..Default::default()
            },
            constants: Vec::new(),
            statics: c.statics.iter().map(|(n, v)| StaticField { name_id: self.lookup(n), value: *v }).collect(),
            fields: c.fields.iter().map(|(n, t)| FieldDecl { name_id: self.lookup(n), ty: *t }).collect(),
        }
    }

    fn write_object(&self, o: &ObjSpec, out: &mut Writer) {
        let mut v = Writer::new(self.id_size);
        match &o.body {
            Body::Instance { class, values } => {
                for val in values {
                    match *val {
                        Value::Object(id) => v.id(id),
                        Value::Primitive(t, raw) => match t.primitive_bytes() {
                            1 => v.u1(raw as u8),
                            2 => v.u2(raw as u16),
                            4 => v.u4(raw as u32),
                            _ => v.u8(raw),
                        },
                    }
                }
                let class_id = self.classes[*class].id;
                let head = InstanceHead { object_id: o.addr, stack_serial: 0, class_id, length: v.buf.len() as u32 };
                SubRecord::Instance { head, values: &v.buf }.write(out);
            }
            Body::ObjArray { class, elements } => {
                elements.iter().for_each(|&e| v.id(e));
                let class_id = self.classes[*class].id;
                let head = ObjArrayHead { object_id: o.addr, stack_serial: 0, length: elements.len() as u32, class_id };
                SubRecord::ObjArray { head, elements: hprof::IdList { bytes: &v.buf, id_size: self.id_size } }
                    .write(out);
            }
            Body::PrimArray { elem, len, data } => {
                let zeros;
                let data = match data {
                    Some(d) => d,
                    None => {
                        zeros = vec![0u8; *len as usize * elem.primitive_bytes() as usize];
                        &zeros
                    }
                };
                let head = PrimArrayHead { object_id: o.addr, stack_serial: 0, length: *len, elem_type: elem.code() };
                SubRecord::PrimArray { head, elem: *elem, data }.write(out);
            }
        }
    }
}
