//! Streams heap dumps of any size with the shapes of a real service's heap, holding nothing
//! of the heap in memory: for measuring how the cost of indexing grows with the number of
//! objects (`benches/scale.sh`).
//!
//! The heap is cut into *units* of 22 to 72 objects, each at a fixed stride of addresses,
//! packed with their true sizes under HotSpot's default 64-bit layout and followed by free
//! space (a region's unused tail), so that any object's address follows from its unit and
//! position without a table. The units are of four kinds, chosen by a hash of their number:
//!
//! - **map**: a `HashMap` with its table, nodes, `String` keys and values;
//! - **list**: an `ArrayList` with its array and values;
//! - **chain**: 24 links of one linked list that runs through every chain unit of the heap,
//!   a path as long as a fifth of the heap, as a long queue makes;
//! - **shared**: values that, like the other kinds' values now and then, also refer to a
//!   value of an earlier unit: subgraphs shared between structures.
//!
//! Units are held 256 at a time by *block* arrays, and the blocks by one array in a static
//! field of `scale.App`. The *sessions* of `scale.Registry.sessions` are the leak: a second
//! dump with more sessions grows only in them, as a session map that is never cleaned does.

use std::io::{self, Write};

use heap::VmLayout;
use hprof::layout::{ClassDumpHead, InstanceHead, LoadClass, ObjArrayHead, PrimArrayHead};
use hprof::{
    sub, tag, BasicType, ClassDump, FieldDecl, Header, IdSize, StaticField, SubRecord, Value, Version, Writer,
};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleSpec {
    /// Objects of the application's structures, about (whole units are written).
    pub objects: u64,
    /// Sessions held by the leaking registry, each of [`SESSION_OBJECTS`] objects.
    pub sessions: u64,
    /// Varies the mix of unit kinds and the shared references.
    pub seed: u64,
}

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScaleStats {
    /// Instances and arrays (classes not included).
    pub objects: u64,
    /// Classes.
    pub classes: u64,
    /// Non-null references in instances and object arrays (static fields not included).
    pub references: u64,
    /// Bytes of the dump.
    pub bytes: u64,
}

/// Objects per session: the session, its id string with its bytes, its attribute array and
/// four attribute values with their payloads.
pub const SESSION_OBJECTS: u64 = 12;

const LAYOUT: VmLayout = VmLayout::DEFAULT_64;
const ID: IdSize = IdSize::Eight;
const HEAP_BASE: u64 = 0x1_0000_0000;
/// Address space per unit; the biggest unit takes 1.6 KiB.
const STRIDE: u64 = 2048;
/// Units per block array.
const BLOCK: u64 = 256;
const CHAIN_LINKS: u64 = 24;
const MAP_ENTRIES: u64 = 8;
const LIST_ITEMS: u64 = 10;
const SHARED_ITEMS: u64 = 12;
/// Bytes of heap data per HEAP_DUMP_SEGMENT.
const SEGMENT: usize = 64 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Map,
    List,
    Chain,
    Shared,
    Session,
}

impl Kind {
    #[cfg(test)]
    fn objects(self) -> u64 {
        match self {
            Kind::Map => 2 + MAP_ENTRIES * 5,
            Kind::List => 2 + LIST_ITEMS * 2,
            Kind::Chain => CHAIN_LINKS * 3,
            Kind::Shared => SHARED_ITEMS * 2,
            Kind::Session => SESSION_OBJECTS,
        }
    }
}

/// The classes, in the order of their ids.
#[derive(Clone, Copy)]
enum C {
    Object,
    String,
    HashMap,
    Node,
    ArrayList,
    Value,
    Link,
    Session,
    ObjectArray,
    ByteArray,
    App,
    Registry,
}

/// A class's fields: name and type, in declaration order.
type Fields = &'static [(&'static str, BasicType)];

const CLASSES: [(C, &str, Fields); 12] = {
    use BasicType::{Boolean, Byte, Float, Int, Long, Object as O};
    [
        (C::Object, "java/lang/Object", &[]),
        (C::String, "java/lang/String", &[("value", O), ("hash", Int), ("coder", Byte), ("hashIsZero", Boolean)]),
        (
            C::HashMap,
            "java/util/HashMap",
            &[("table", O), ("size", Int), ("modCount", Int), ("threshold", Int), ("loadFactor", Float)],
        ),
        (C::Node, "java/util/HashMap$Node", &[("hash", Int), ("key", O), ("value", O), ("next", O)]),
        (C::ArrayList, "java/util/ArrayList", &[("elementData", O), ("size", Int), ("modCount", Int)]),
        (C::Value, "scale/Value", &[("payload", O), ("next", O), ("shared", O), ("version", Long)]),
        (C::Link, "scale/Link", &[("next", O), ("item", O), ("seq", Int)]),
        (C::Session, "scale/Session", &[("id", O), ("attributes", O), ("created", Long), ("user", Int)]),
        (C::ObjectArray, "[Ljava/lang/Object;", &[]),
        (C::ByteArray, "[B", &[]),
        (C::App, "scale/App", &[]),
        (C::Registry, "scale/Registry", &[]),
    ]
};

fn class_id(c: C) -> u64 {
    0x0800_0000 + c as u64 * 0x100
}

fn field_bytes(c: C) -> u64 {
    CLASSES[c as usize].2.iter().map(|f| u64::from(LAYOUT.value_bytes(f.1))).sum()
}

fn instance_size(c: C) -> u64 {
    LAYOUT.instance_bytes(field_bytes(c))
}

/// A splitmix64 step: the kinds and links of unit `u` follow from `seed` and `u` alone.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The plan of a heap: how many units of each part, and where each unit lives.
struct Plan {
    seed: u64,
    units: u64,
    sessions: u64,
}

impl Plan {
    fn new(spec: &ScaleSpec) -> Plan {
        // The mix averages (42 + 22 + 72 + 24) / 4 = 40 objects per unit.
        let units = spec.objects.div_ceil(40).max(1);
        Plan { seed: spec.seed, units, sessions: spec.sessions }
    }

    fn kind(&self, u: u64) -> Kind {
        if u >= self.units {
            return Kind::Session;
        }
        match mix(self.seed ^ u) % 4 {
            0 => Kind::Map,
            1 => Kind::List,
            2 => Kind::Chain,
            _ => Kind::Shared,
        }
    }

    /// Units of the application, then one unit per session.
    fn all_units(&self) -> u64 {
        self.units + self.sessions
    }

    fn unit_addr(&self, u: u64) -> u64 {
        HEAP_BASE + u * STRIDE
    }

    /// The block arrays and the two top arrays follow the units.
    fn blocks_of(&self, units: u64) -> u64 {
        units.div_ceil(BLOCK)
    }

    fn block_addr(&self, b: u64) -> u64 {
        HEAP_BASE + self.all_units() * STRIDE + b * STRIDE
    }

    fn app_blocks(&self) -> u64 {
        self.blocks_of(self.units)
    }

    fn session_blocks(&self) -> u64 {
        self.blocks_of(self.sessions)
    }

    fn top_addr(&self, registry: bool) -> u64 {
        let blocks = self.app_blocks() + self.session_blocks();
        let base = self.block_addr(blocks);
        if registry {
            base + LAYOUT.array_bytes(BasicType::Object, self.app_blocks()).next_multiple_of(STRIDE)
        } else {
            base
        }
    }

    /// The next chain unit after `u`, if any (the chain ends at the heap's last one).
    fn next_chain(&self, u: u64) -> Option<u64> {
        (u + 1..self.units).find(|&v| self.kind(v) == Kind::Chain)
    }

    /// A value of an earlier unit that unit `u`'s `i`-th value also refers to, now and then.
    fn shared_target(&self, u: u64, i: u64) -> Option<u64> {
        let h = mix(self.seed.rotate_left(17) ^ (u << 8) ^ i);
        let every = if self.kind(u) == Kind::Shared { 1 } else { 8 };
        if !h.is_multiple_of(every) || u == 0 {
            return None;
        }
        let back = 1 + (h >> 8) % u.min(4096);
        let v = u - back;
        // The first value of unit v: every kind but chain starts its values at a known place.
        match self.kind(v) {
            Kind::Chain | Kind::Session => None,
            k => Some(self.unit_addr(v) + first_value_offset(k)),
        }
    }
}

/// Where a unit's first `scale.Value` lies from the unit's start.
fn first_value_offset(k: Kind) -> u64 {
    let obj = |n| LAYOUT.array_bytes(BasicType::Object, n);
    match k {
        Kind::Map => {
            let node = instance_size(C::Node);
            let string = instance_size(C::String);
            let key = LAYOUT.array_bytes(BasicType::Byte, KEY_BYTES);
            instance_size(C::HashMap) + obj(16) + node + string + key
        }
        Kind::List => instance_size(C::ArrayList) + obj(LIST_ITEMS),
        _ => 0,
    }
}

const KEY_BYTES: u64 = 12;

/// Writes one object after another into heap dump segments.
struct Out<W: Write> {
    file: W,
    seg: Writer,
    stats: ScaleStats,
}

impl<W: Write> Out<W> {
    fn record(&mut self, tag: u8, body: &[u8]) -> io::Result<()> {
        let mut head = Writer::new(ID);
        hprof::layout::RecordHead { tag, time_delta: 0, length: body.len() as u32 }.write(&mut head);
        self.file.write_all(&head.buf)?;
        self.file.write_all(body)?;
        self.stats.bytes += (head.buf.len() + body.len()) as u64;
        Ok(())
    }

    fn flush_segment(&mut self, at_least: usize) -> io::Result<()> {
        if self.seg.buf.len() >= at_least && !self.seg.buf.is_empty() {
            let body = std::mem::take(&mut self.seg.buf);
            self.record(tag::HEAP_DUMP_SEGMENT, &body)?;
            self.seg.buf = body;
            self.seg.buf.clear();
        }
        Ok(())
    }

    /// An instance of `c` at `addr`; `values` gives each field in declaration order
    /// (references as ids, primitives as raw bits); returns its size.
    fn instance(&mut self, addr: u64, c: C, values: &[u64]) -> u64 {
        let fields = CLASSES[c as usize].2;
        let length = fields.iter().map(|f| f.1.dump_bytes(ID) as u32).sum();
        let w = &mut self.seg;
        w.u1(sub::INSTANCE_DUMP);
        InstanceHead { object_id: addr, stack_serial: 0, class_id: class_id(c), length }.write(w);
        for (f, &v) in fields.iter().zip(values) {
            match f.1 {
                BasicType::Object => {
                    w.id(v);
                    self.stats.references += u64::from(v != 0);
                }
                BasicType::Boolean | BasicType::Byte => w.u1(v as u8),
                BasicType::Int | BasicType::Float => w.u4(v as u32),
                _ => w.u8(v),
            }
        }
        self.stats.objects += 1;
        instance_size(c)
    }

    fn object_array(&mut self, addr: u64, elements: &[u64]) -> u64 {
        let n = elements.len() as u64;
        let w = &mut self.seg;
        w.u1(sub::OBJ_ARRAY_DUMP);
        ObjArrayHead { object_id: addr, stack_serial: 0, length: n as u32, class_id: class_id(C::ObjectArray) }
            .write(w);
        for &e in elements {
            w.id(e);
            self.stats.references += u64::from(e != 0);
        }
        self.stats.objects += 1;
        LAYOUT.array_bytes(BasicType::Object, n)
    }

    fn bytes(&mut self, addr: u64, data: &[u8]) -> u64 {
        let head = PrimArrayHead {
            object_id: addr,
            stack_serial: 0,
            length: data.len() as u32,
            elem_type: BasicType::Byte.code(),
        };
        SubRecord::PrimArray { head, elem: BasicType::Byte, data }.write(&mut self.seg);
        self.stats.objects += 1;
        LAYOUT.array_bytes(BasicType::Byte, data.len() as u64)
    }

    /// A `String` and its Latin-1 bytes at `addr`; returns the bytes they take.
    fn string(&mut self, addr: u64, text: &[u8]) -> u64 {
        let s = instance_size(C::String);
        self.instance(addr, C::String, &[addr + s, 0, 0, 1]);
        s + self.bytes(addr + s, text)
    }

    /// A `scale.Value` with its payload at `addr`; returns the bytes they take.
    fn value(&mut self, addr: u64, next: u64, shared: Option<u64>, payload: u64) -> u64 {
        let s = instance_size(C::Value);
        self.instance(addr, C::Value, &[addr + s, next, shared.unwrap_or(0), 1]);
        let data = [0x5au8; 64];
        s + self.bytes(addr + s, &data[..payload as usize])
    }
}

/// Writes a dump of `spec`'s heap to `file`, as a JVM would write it (`jcmd GC.heap_dump`).
pub fn write_scale_heap<W: Write>(file: W, spec: &ScaleSpec) -> io::Result<ScaleStats> {
    let plan = Plan::new(spec);
    let mut out = Out { file, seg: Writer::new(ID), stats: ScaleStats::default() };
    let mut head = Writer::new(ID);
    Header { version: Version::V102, id_size: ID, timestamp_ms: 1_700_000_000_000, len: 31 }.write(&mut head);
    out.file.write_all(&head.buf)?;
    out.stats.bytes += head.buf.len() as u64;
    write_names(&mut out)?;
    write_classes(&mut out, &plan);
    for u in 0..plan.all_units() {
        write_unit(&mut out, &plan, u);
        out.flush_segment(SEGMENT)?;
    }
    write_blocks(&mut out, &plan);
    out.flush_segment(0)?;
    out.record(tag::HEAP_DUMP_END, &[])?;
    out.stats.classes = CLASSES.len() as u64;
    out.file.flush()?;
    Ok(out.stats)
}

fn name_id(i: usize) -> u64 {
    0x6000_0000 + i as u64 * 8
}

/// Every name the dump uses: class names, then field names, then the two static fields'.
fn names() -> Vec<&'static str> {
    let mut v: Vec<&str> = CLASSES.iter().map(|c| c.1).collect();
    for c in &CLASSES {
        for f in c.2 {
            if !v.contains(&f.0) {
                v.push(f.0);
            }
        }
    }
    v.extend(["blocks", "sessions"]);
    v
}

fn lookup(name: &str) -> u64 {
    name_id(names().iter().position(|n| *n == name).unwrap_or(0))
}

fn write_names<W: Write>(out: &mut Out<W>) -> io::Result<()> {
    for (i, n) in names().iter().enumerate() {
        let mut body = Writer::new(ID);
        body.id(name_id(i));
        body.bytes(n.as_bytes());
        out.record(tag::UTF8, &body.buf)?;
    }
    for (i, c) in CLASSES.iter().enumerate() {
        let mut body = Writer::new(ID);
        LoadClass { serial: i as u32 + 1, class_id: class_id(c.0), stack_serial: 0, name_id: name_id(i) }
            .write(&mut body);
        out.record(tag::LOAD_CLASS, &body.buf)?;
    }
    Ok(())
}

fn write_classes<W: Write>(out: &mut Out<W>, plan: &Plan) {
    for (c, _, fields) in CLASSES {
        let statics = match c {
            C::App => vec![StaticField { name_id: lookup("blocks"), value: Value::Object(plan.top_addr(false)) }],
            C::Registry => vec![StaticField { name_id: lookup("sessions"), value: Value::Object(plan.top_addr(true)) }],
            _ => Vec::new(),
        };
        let dump = ClassDump {
            head: ClassDumpHead {
                class_id: class_id(c),
                super_id: if matches!(c, C::Object) { 0 } else { class_id(C::Object) },
                instance_size: fields.iter().map(|f| f.1.dump_bytes(ID) as u32).sum(),
                ..Default::default()
            },
            constants: Vec::new(),
            statics,
            fields: fields.iter().map(|f| FieldDecl { name_id: lookup(f.0), ty: f.1 }).collect(),
        };
        SubRecord::Class(Box::new(dump)).write(&mut out.seg);
        let root = hprof::Root {
            kind: hprof::RootKind::StickyClass,
            object_id: class_id(c),
            thread_serial: None,
            frame: None,
            stack_serial: None,
            ref_id: None,
        };
        SubRecord::Root(root).write(&mut out.seg);
    }
}

fn write_unit<W: Write>(out: &mut Out<W>, plan: &Plan, u: u64) {
    let base = plan.unit_addr(u);
    let mut at = base;
    let payload = |i: u64| 8 + (mix(plan.seed ^ (u << 5) ^ i) % 48);
    match plan.kind(u) {
        Kind::Map => {
            let hm = instance_size(C::HashMap);
            let table = at + hm;
            let nodes = table + LAYOUT.array_bytes(BasicType::Object, 16);
            // Each entry: node, key string with its bytes, value with its payload.
            let node = instance_size(C::Node);
            let key = instance_size(C::String) + LAYOUT.array_bytes(BasicType::Byte, KEY_BYTES);
            let mut entry_at = Vec::with_capacity(MAP_ENTRIES as usize);
            let mut e = nodes;
            for i in 0..MAP_ENTRIES {
                entry_at.push(e);
                e += node + key + instance_size(C::Value) + LAYOUT.array_bytes(BasicType::Byte, payload(i));
            }
            at += out.instance(at, C::HashMap, &[table, MAP_ENTRIES, 3, 12, 0x3f40_0000]);
            // Two entries share a bucket: the second hangs off the first's `next`.
            let slots: Vec<u64> = (0..16u64)
                .map(|s| match s {
                    s if s < MAP_ENTRIES && s != 1 => entry_at[s as usize],
                    _ => 0,
                })
                .collect();
            at += out.object_array(at, &slots);
            for i in 0..MAP_ENTRIES {
                debug_assert_eq!(at, entry_at[i as usize]);
                let next = if i == 0 { entry_at[1] } else { 0 };
                let k = at + node;
                let v = k + key;
                at += out.instance(at, C::Node, &[i * 31, k, v, next]);
                let text = format!("k{:011}", (u * MAP_ENTRIES + i) % 100_000_000_000);
                at += out.string(at, text.as_bytes());
                at += out.value(at, 0, plan.shared_target(u, i), payload(i));
            }
        }
        Kind::List | Kind::Shared => {
            let (items, list) = match plan.kind(u) {
                Kind::List => (LIST_ITEMS, true),
                _ => (SHARED_ITEMS, false),
            };
            let mut first = at;
            if list {
                let al = instance_size(C::ArrayList);
                first = at + al + LAYOUT.array_bytes(BasicType::Object, items);
                let mut item_at = Vec::with_capacity(items as usize);
                let mut e = first;
                for i in 0..items {
                    item_at.push(e);
                    e += instance_size(C::Value) + LAYOUT.array_bytes(BasicType::Byte, payload(i));
                }
                at += out.instance(at, C::ArrayList, &[at + al, items, items]);
                at += out.object_array(at, &item_at);
            }
            debug_assert_eq!(at, first);
            // Without a list, the values hold each other in a row.
            for i in 0..items {
                let size = instance_size(C::Value) + LAYOUT.array_bytes(BasicType::Byte, payload(i));
                let next = if list || i + 1 == items { 0 } else { at + size };
                at += out.value(at, next, plan.shared_target(u, i), payload(i));
            }
        }
        Kind::Chain => {
            let link = instance_size(C::Link);
            let item = instance_size(C::Value) + LAYOUT.array_bytes(BasicType::Byte, 8);
            for i in 0..CHAIN_LINKS {
                let next = if i + 1 < CHAIN_LINKS {
                    at + link + item
                } else {
                    plan.next_chain(u).map_or(0, |v| plan.unit_addr(v))
                };
                at += out.instance(at, C::Link, &[next, at + link, i]);
                at += out.value(at, 0, None, 8);
            }
        }
        Kind::Session => {
            let s = instance_size(C::Session);
            let id_at = at + s;
            let id_len = instance_size(C::String) + LAYOUT.array_bytes(BasicType::Byte, 20);
            let attrs = id_at + id_len;
            let values = attrs + LAYOUT.array_bytes(BasicType::Object, 4);
            let value = instance_size(C::Value) + LAYOUT.array_bytes(BasicType::Byte, 16);
            at += out.instance(at, C::Session, &[id_at, attrs, 1_700_000_000_000 + u, u % 1000]);
            at += out.string(at, format!("session-{:012}", u - plan.units).as_bytes());
            at += out.object_array(at, &[values, values + value, values + 2 * value, values + 3 * value]);
            for _ in 0..4 {
                at += out.value(at, 0, None, 16);
            }
        }
    }
    debug_assert!(at - base <= STRIDE, "unit {u} takes {} bytes", at - base);
}

fn write_blocks<W: Write>(out: &mut Out<W>, plan: &Plan) {
    let (app, sessions) = (plan.app_blocks(), plan.session_blocks());
    for b in 0..app + sessions {
        let (first, end) = if b < app {
            (b * BLOCK, ((b + 1) * BLOCK).min(plan.units))
        } else {
            let s = b - app;
            (plan.units + s * BLOCK, (plan.units + (s + 1) * BLOCK).min(plan.all_units()))
        };
        out.object_array(plan.block_addr(b), &(first..end).map(|u| plan.unit_addr(u)).collect::<Vec<_>>());
    }
    out.object_array(plan.top_addr(false), &(0..app).map(|b| plan.block_addr(b)).collect::<Vec<_>>());
    out.object_array(plan.top_addr(true), &(app..app + sessions).map(|b| plan.block_addr(b)).collect::<Vec<_>>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_fits_its_stride_and_values_lie_where_they_are_referred_to() {
        let spec = ScaleSpec { objects: 20_000, sessions: 300, seed: 7 };
        let mut buf = Vec::new();
        let stats = write_scale_heap(&mut buf, &spec).unwrap();
        assert_eq!(stats.bytes, buf.len() as u64);
        let plan = Plan::new(&spec);
        let kinds: Vec<Kind> = (0..plan.units).map(|u| plan.kind(u)).collect();
        for k in [Kind::Map, Kind::List, Kind::Chain, Kind::Shared] {
            assert!(kinds.contains(&k), "no {k:?} unit");
        }
        let unit_objects: u64 = (0..plan.all_units()).map(|u| plan.kind(u).objects()).sum();
        let arrays = plan.app_blocks() + plan.session_blocks() + 2;
        assert_eq!(stats.objects, unit_objects + arrays);
    }
}
