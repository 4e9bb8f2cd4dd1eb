//! The class table: names, hierarchy, field layouts and JVM instance sizes.

use hprof::{BasicType, ClassDump, IdSize, Value};
use rustc_hash::FxHashMap;

use crate::index::DumpIndex;
use crate::layout::VmLayout;
use crate::names;
use crate::warnings::{WarningKind, Warnings};

/// Dense index of a class in a [`ClassTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassIdx(pub u32);

impl ClassIdx {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the instances of a class are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    /// Plain objects with fields.
    Instance,
    /// Arrays of references.
    ObjectArray,
    /// Arrays of one primitive type.
    PrimitiveArray(BasicType),
}

/// How strongly a class's `referent` field holds its target (for `java.lang.ref.Reference` subclasses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefStrength {
    /// An ordinary reference.
    Strong,
    /// `WeakReference.referent`.
    Weak,
    /// `SoftReference.referent`.
    Soft,
    /// `PhantomReference.referent`.
    Phantom,
    /// `FinalReference.referent` (objects awaiting finalization).
    Final,
}

impl RefStrength {
    /// Lowercase name (`weak`).
    pub fn name(self) -> &'static str {
        match self {
            RefStrength::Strong => "strong",
            RefStrength::Weak => "weak",
            RefStrength::Soft => "soft",
            RefStrength::Phantom => "phantom",
            RefStrength::Final => "final",
        }
    }
}

/// An instance field declared by a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Field type.
    pub ty: BasicType,
}

/// A static field and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Static {
    /// Field name.
    pub name: String,
    /// Value (object ids are file ids, not yet dense indices).
    pub value: Value,
}

/// Where a reference sits inside an instance's field bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefSlot {
    /// Byte offset in the dump's field values.
    pub offset: u32,
    /// The class declaring the field.
    pub owner: ClassIdx,
    /// Index in the owner's [`Class::fields`].
    pub field: u16,
}

/// One class.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The class object's id (its mirror's address).
    pub id: u64,
    /// Java source name (`java.util.HashMap$Node`, `int[]`).
    pub name: String,
    /// Superclass.
    pub super_class: Option<ClassIdx>,
    /// Id of the defining class loader (0 for the bootstrap loader).
    pub loader_id: u64,
    /// Instances' kind.
    pub kind: ClassKind,
    /// Instance fields declared here (not inherited), in dump order.
    pub fields: Vec<Field>,
    /// Static fields.
    pub statics: Vec<Static>,
    /// Instance size the dump declares (its own accounting, 8-byte references).
    pub dump_instance_bytes: u32,
    /// Instance size in the JVM, for [`ClassKind::Instance`] classes.
    pub instance_bytes: u64,
    /// Strength of the `referent` field when this is a `java.lang.ref.Reference`.
    pub ref_strength: RefStrength,
    /// Every reference field of an instance (own first, then inherited), as laid out in the dump.
    pub ref_slots: Vec<RefSlot>,
    /// Position in `ref_slots` of `Reference.referent`, when the class is a Reference.
    pub referent_slot: Option<usize>,
    /// Byte length of an instance's field values in the dump.
    pub values_bytes: u32,
    /// File offset of the CLASS_DUMP, if the dump has one (synthesized classes have none).
    pub dump_offset: Option<u64>,
    /// Bytes the class object holds beyond `java.lang.Class`'s own fields: its statics
    /// (HotSpot), or what Android's overhead pseudo-array stands for (statics, method tables).
    pub embedded_bytes: u64,
    /// Android: the static field that points at that pseudo-array, which is no reference.
    pub overhead_static: Option<u16>,
}

/// All classes of a dump, indexed densely.
#[derive(Debug, Clone, Default)]
pub struct ClassTable {
    classes: Vec<Class>,
    by_id: FxHashMap<u64, ClassIdx>,
}

impl ClassTable {
    /// Builds the table from the class dumps (sorted by id, duplicates dropped with a warning).
    /// The snapshot and the census build theirs during their heap pass; a tool that walks the
    /// records itself (the redactor) builds one from the class dumps it collected.
    pub fn build(ix: &DumpIndex<'_>, mut dumps: Vec<(u64, Box<ClassDump>)>, warnings: &mut Warnings) -> ClassTable {
        dumps.sort_by_key(|(off, d)| (d.head.class_id, *off));
        let before = dumps.len();
        dumps.dedup_by_key(|(_, d)| d.head.class_id);
        warnings.add(WarningKind::DuplicateId, (before - dumps.len()) as u64, None, || "class dumps".into());
        let mut t = ClassTable::default();
        for (off, d) in &dumps {
            t.push(Class {
                id: d.head.class_id,
                name: class_name(ix, d.head.class_id),
                super_class: None,
                loader_id: d.head.loader_id,
                kind: ClassKind::Instance,
                fields: d.fields.iter().map(|f| Field { name: string(ix, f.name_id), ty: f.ty }).collect(),
                statics: d.statics.iter().map(|s| Static { name: string(ix, s.name_id), value: s.value }).collect(),
                dump_instance_bytes: d.head.instance_size,
                instance_bytes: 0,
                ref_strength: RefStrength::Strong,
                ref_slots: Vec::new(),
                referent_slot: None,
                values_bytes: 0,
                dump_offset: Some(*off),
                embedded_bytes: 0,
                overhead_static: None,
            });
        }
        for (i, (_, d)) in dumps.iter().enumerate() {
            t.classes[i].super_class = t.by_id.get(&d.head.super_id).copied();
            t.classes[i].kind = kind_of(&t.classes[i].name);
        }
        t.break_cycles(warnings);
        t.compute_slots(ix.header.id_size);
        t
    }

    fn push(&mut self, c: Class) -> ClassIdx {
        let idx = ClassIdx(self.classes.len() as u32);
        self.by_id.entry(c.id).or_insert(idx);
        self.classes.push(c);
        idx
    }

    /// A class the dump uses but does not define (primitive array classes in some dumps, or
    /// classes of dangling objects); it gets a name that says so.
    pub(crate) fn placeholder(&mut self, id: u64, name: String, kind: ClassKind) -> ClassIdx {
        if let Some(&c) = self.by_id.get(&id) {
            return c;
        }
        let super_class = self.find("java.lang.Object");
        self.push(Class {
            id,
            name,
            super_class,
            loader_id: 0,
            kind,
            fields: Vec::new(),
            statics: Vec::new(),
            dump_instance_bytes: 0,
            instance_bytes: 0,
            ref_strength: RefStrength::Strong,
            ref_slots: Vec::new(),
            referent_slot: None,
            values_bytes: 0,
            dump_offset: None,
            embedded_bytes: 0,
            overhead_static: None,
        })
    }

    /// The class of primitive arrays of `elem`, found by name or synthesized.
    pub(crate) fn primitive_array(&mut self, elem: BasicType) -> ClassIdx {
        let name = format!("{}[]", elem.java_name());
        match self.find(&name) {
            Some(c) => c,
            // Synthetic ids cannot collide with real, aligned addresses.
            None => self.placeholder(u64::from(elem.code()) | 1 << 63 | 1, name, ClassKind::PrimitiveArray(elem)),
        }
    }

    fn break_cycles(&mut self, warnings: &mut Warnings) {
        let n = self.classes.len();
        for i in 0..n {
            let (mut cur, mut steps) = (self.classes[i].super_class, 0);
            while let Some(c) = cur {
                steps += 1;
                if steps > n {
                    let name = self.classes[i].name.clone();
                    warnings.add(WarningKind::SuperclassCycle, 1, self.classes[i].dump_offset, || name);
                    self.classes[i].super_class = None;
                    break;
                }
                cur = self.classes[c.index()].super_class;
            }
        }
    }

    fn compute_slots(&mut self, id_size: IdSize) {
        let reference = self.find("java.lang.ref.Reference");
        for i in 0..self.classes.len() {
            let (mut slots, mut offset, mut referent, mut strength) = (Vec::new(), 0u32, None, RefStrength::Strong);
            for owner in self.chain(ClassIdx(i as u32)).collect::<Vec<_>>() {
                strength = strength_of(&self.classes[owner.index()].name).unwrap_or(strength);
                for (f, field) in self.classes[owner.index()].fields.iter().enumerate() {
                    if field.ty == BasicType::Object {
                        if Some(owner) == reference && field.name == "referent" {
                            referent = Some(slots.len());
                        }
                        slots.push(RefSlot { offset, owner, field: f as u16 });
                    }
                    offset = offset.saturating_add(field.ty.dump_bytes(id_size) as u32);
                }
            }
            let c = &mut self.classes[i];
            (c.ref_slots, c.values_bytes) = (slots, offset);
            if referent.is_some() {
                (c.referent_slot, c.ref_strength) = (referent, strength);
            }
        }
    }

    /// Sets every instance class's JVM size from its fields under `layout`, or, with
    /// `declared`, from the size the dump declares (Android's), rounded to the alignment.
    pub(crate) fn apply_layout(&mut self, layout: &VmLayout, declared: bool) {
        for i in 0..self.classes.len() {
            if declared && self.classes[i].dump_offset.is_some() {
                self.classes[i].instance_bytes = layout.align_up(u64::from(self.classes[i].dump_instance_bytes));
                continue;
            }
            let bytes: u64 = self
                .chain(ClassIdx(i as u32))
                .flat_map(|c| self.classes[c.index()].fields.iter())
                .map(|f| u64::from(layout.value_bytes(f.ty)))
                .sum();
            self.classes[i].instance_bytes = layout.instance_bytes(bytes);
        }
    }

    /// `class` and its superclasses, most derived first.
    pub fn chain(&self, class: ClassIdx) -> impl Iterator<Item = ClassIdx> + '_ {
        std::iter::successors(Some(class), |c| self.classes[c.index()].super_class)
    }

    /// The class with this dense index.
    pub fn get(&self, c: ClassIdx) -> &Class {
        &self.classes[c.index()]
    }

    pub(crate) fn get_mut(&mut self, c: ClassIdx) -> &mut Class {
        &mut self.classes[c.index()]
    }

    /// The class whose object id is `id`.
    pub fn by_id(&self, id: u64) -> Option<ClassIdx> {
        self.by_id.get(&id).copied()
    }

    /// The first class named exactly `name` (several loaders may define the same name).
    pub fn find(&self, name: &str) -> Option<ClassIdx> {
        self.classes.iter().position(|c| c.name == name).map(|i| ClassIdx(i as u32))
    }

    /// Every class named exactly `name`.
    pub fn find_all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = ClassIdx> + 's {
        self.iter().filter(move |(_, c)| c.name == name).map(|(i, _)| i)
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// True when there are no classes.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// All classes with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (ClassIdx, &Class)> {
        self.classes.iter().enumerate().map(|(i, c)| (ClassIdx(i as u32), c))
    }
}

fn kind_of(name: &str) -> ClassKind {
    let Some(elem) = name.strip_suffix("[]") else {
        return ClassKind::Instance;
    };
    match BasicType::PRIMITIVES.into_iter().find(|t| t.java_name() == elem) {
        Some(t) => ClassKind::PrimitiveArray(t),
        None => ClassKind::ObjectArray,
    }
}

fn strength_of(name: &str) -> Option<RefStrength> {
    Some(match name {
        "java.lang.ref.WeakReference" => RefStrength::Weak,
        "java.lang.ref.SoftReference" => RefStrength::Soft,
        "java.lang.ref.PhantomReference" => RefStrength::Phantom,
        "java.lang.ref.FinalReference" => RefStrength::Final,
        _ => return None,
    })
}

fn string(ix: &DumpIndex<'_>, id: u64) -> String {
    match ix.string(id) {
        Some(s) => String::from_utf8_lossy(s).into_owned(),
        None => format!("<string 0x{id:x}>"),
    }
}

fn class_name(ix: &DumpIndex<'_>, class_id: u64) -> String {
    match ix.class_names.get(&class_id).and_then(|&n| ix.string(n)) {
        Some(raw) => names::java_name(raw),
        None => format!("<class 0x{class_id:x}>"),
    }
}

/// Calls `f` with the slot (in `c.ref_slots`) and id of every non-null reference field of an
/// instance of `c` whose field bytes are `values`, a Reference's referent first.
pub(crate) fn for_each_field_ref(c: &Class, values: &[u8], id_size: hprof::IdSize, mut f: impl FnMut(usize, u64)) {
    let order = c.referent_slot.into_iter().chain((0..c.ref_slots.len()).filter(|&s| Some(s) != c.referent_slot));
    for s in order {
        let id = hprof::id_in(values, c.ref_slots[s].offset as usize, id_size);
        if id != 0 {
            f(s, id);
        }
    }
}
