//! What a redaction changes, decided before anything is written: the class table, which
//! primitive arrays stay readable, which `byte[]` are UTF-16 strings, and, per class, the
//! fields to change. Two walks over the heap records, segments in parallel.

use hprof::{BasicType, SubRecord, SubRecords, Value};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use heap::{ClassIdx, ClassTable, DumpIndex, Warnings};

use crate::mask::Units;
use crate::names::{Collision, Symbols};
use crate::options::Options;

/// Reference fields whose strings are the program's configuration, not its users' data, and
/// stay readable by default: analyses name threads by them.
const CONFIGURATION: [(&str, &str); 3] =
    [("java.lang.Thread", "name"), ("java.lang.ThreadGroup", "name"), (EXPECTED_CLASS, "site")];

/// The marker class of `LeakScope.expectDead`, whose `site` field is a code location.
const EXPECTED_CLASS: &str = "io.leakscope.LeakScope$Expected";

/// Fields the heap cannot be read without, never changed: a string's coder says how its
/// array is encoded; JDK 8's offset and count say which part of it is the string.
const STRUCTURE: [(&str, &str); 3] =
    [("java.lang.String", "coder"), ("java.lang.String", "offset"), ("java.lang.String", "count")];

/// Where a `java.lang.String`'s fields sit in its instance bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StringSlots {
    pub value: u32,
    pub coder: Option<u32>,
    /// `hash` (int) and JDK 13+'s `hashIsZero` (boolean): a hash of the text, reset.
    pub hash: Option<u32>,
    pub hash_is_zero: Option<u32>,
}

/// What to do with the instances of one class.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClassPlan {
    /// The class is one `--keep` names: its fields and what its references reach stay.
    pub kept: bool,
    /// Offsets of reference fields whose targets stay readable.
    pub keep_refs: Vec<u32>,
    /// Offsets of thread names masked under `--names`, whose images the mapping gives back.
    pub name_refs: Vec<u32>,
    /// Set for `java.lang.String`.
    pub string: Option<StringSlots>,
    /// Primitive fields to mask (`--fields`): offset and type.
    pub fields: Vec<(u32, BasicType)>,
}

/// Everything decided before writing.
#[derive(Debug)]
pub(crate) struct Plan {
    pub classes: ClassTable,
    pub per_class: Vec<ClassPlan>,
    /// Their contents, each after its [`Units`] code: every array holding one of them stays as
    /// it is, wherever it is, so that equal values stay equal.
    pub kept_values: FxHashSet<Vec<u8>>,
    /// (element type code, length) of the kept contents: most arrays need no lookup.
    pub kept_shapes: FxHashSet<(u8, usize)>,
    /// `byte[]`s that are UTF-16 strings (coder 1).
    pub utf16: FxHashSet<u64>,
    /// Types of primitive fields replaced (`--fields`), statics included.
    pub field_types: Vec<BasicType>,
    /// Which symbols are written, and the application's names renamed (`--names`).
    pub symbols: Symbols,
    /// Thread names masked under `--names`: their arrays' units and contents.
    pub thread_names: Vec<(Units, Vec<u8>)>,
    /// Problems met while reading.
    pub warnings: Warnings,
}

/// Sub-records of every segment, each segment's walk folded into one `T` (segments in parallel).
pub(crate) fn walk<T: Send + Default>(
    data: &[u8],
    ix: &DumpIndex<'_>,
    visit: impl Fn(&mut T, u64, SubRecord<'_>) + Sync,
) -> Vec<T> {
    ix.segments
        .par_iter()
        .map(|seg| {
            let mut acc = T::default();
            let body = &data[seg.offset as usize..seg.offset as usize + seg.len];
            for (at, sub) in SubRecords::new(body, seg.offset, ix.header.id_size).flatten() {
                visit(&mut acc, at, sub);
            }
            acc
        })
        .collect()
}

impl Plan {
    pub(crate) fn build(data: &[u8], ix: &DumpIndex<'_>, opts: &Options) -> Result<Plan, Collision> {
        let id_size = ix.header.id_size;
        #[derive(Default)]
        struct Dumps {
            classes: Vec<(u64, Box<hprof::ClassDump>)>,
            heap_names: Vec<u64>,
        }
        let (mut dumps, mut heap_names) = (Vec::new(), Vec::new());
        for d in walk(data, ix, |acc: &mut Dumps, at, sub| match sub {
            SubRecord::Class(c) => acc.classes.push((at, c)),
            SubRecord::HeapDumpInfo(info) => acc.heap_names.push(info.name_id),
            _ => {}
        }) {
            dumps.extend(d.classes);
            heap_names.extend(d.heap_names);
        }
        let kept = |java: &str| {
            growth::platform::is_platform_class(java.trim_end_matches("[]")) || matches_keep(&opts.keep, java)
        };
        let names = opts.names.as_ref().map(|k| (k.names(), &kept as &dyn Fn(&str) -> bool));
        let symbols = Symbols::build(data, ix, &dumps, &heap_names, names)?;
        let mut warnings = Warnings::default();
        let classes = ClassTable::build(ix, dumps.clone(), &mut warnings);
        let per_class: Vec<ClassPlan> = classes.iter().map(|(c, _)| class_plan(&classes, c, opts, id_size)).collect();
        let plan_of = |class_id: u64| classes.by_id(class_id).map(|c| &per_class[c.index()]);

        // What kept classes and configuration fields reference, statics of kept classes
        // included; and the thread names `--names` masks.
        let (mut targets, mut named) = (FxHashSet::default(), FxHashSet::default());
        for (keep, name) in walk(data, ix, |acc: &mut (Vec<u64>, Vec<u64>), _, sub| {
            if let SubRecord::Instance { head, values } = sub {
                if let Some(p) = plan_of(head.class_id) {
                    let id = |&off: &u32| hprof::id_at(&values[off as usize..], 0, id_size);
                    acc.0.extend(p.keep_refs.iter().map(id));
                    acc.1.extend(p.name_refs.iter().map(id));
                }
            }
        }) {
            targets.extend(keep.into_iter().filter(|&id| id != 0));
            named.extend(name.into_iter().filter(|&id| id != 0));
        }
        for (_, d) in &dumps {
            if plan_of(d.head.class_id).is_some_and(|p| p.kept) {
                targets.extend(d.statics.iter().filter_map(|s| match s.value {
                    Value::Object(id) if id != 0 => Some(id),
                    _ => None,
                }));
            }
        }

        // Strings: the arrays of kept ones, and which arrays are UTF-16.
        #[derive(Default)]
        struct Strings {
            kept: Vec<u64>,
            named: Vec<u64>,
            utf16: Vec<u64>,
        }
        let strings = walk(data, ix, |acc: &mut Strings, _, sub| {
            let SubRecord::Instance { head, values } = sub else { return };
            let Some(slots) = plan_of(head.class_id).and_then(|p| p.string) else { return };
            let value = hprof::id_at(&values[slots.value as usize..], 0, id_size);
            if targets.contains(&head.object_id) {
                acc.kept.push(value);
            }
            if named.contains(&head.object_id) {
                acc.named.push(value);
            }
            if slots.coder.is_some_and(|c| values.get(c as usize) == Some(&1)) {
                acc.utf16.push(value);
            }
        });
        let mut kept = targets;
        let mut named_arrays = FxHashSet::default();
        let mut utf16 = FxHashSet::default();
        for s in strings {
            kept.extend(s.kept);
            named_arrays.extend(s.named);
            utf16.extend(s.utf16);
        }
        #[derive(Default)]
        struct Values {
            kept: Vec<(u8, Vec<u8>)>,
            named: Vec<(Units, Vec<u8>)>,
        }
        let values = walk(data, ix, |acc: &mut Values, _, sub| {
            if let SubRecord::PrimArray { head, elem, data } = sub {
                let units = units(elem, utf16.contains(&head.object_id));
                if kept.contains(&head.object_id) {
                    acc.kept.push((elem.code(), value_key(units, data)));
                }
                if named_arrays.contains(&head.object_id) {
                    acc.named.push((units, data.to_vec()));
                }
            }
        });
        let (mut kept_values, mut kept_shapes) = (FxHashSet::default(), FxHashSet::default());
        let mut thread_names = Vec::new();
        for v in values {
            for (elem, key) in v.kept {
                kept_shapes.insert((elem, key.len() - 1));
                kept_values.insert(key);
            }
            thread_names.extend(v.named);
        }
        Ok(Plan {
            classes,
            per_class,
            kept_values,
            kept_shapes,
            utf16,
            field_types: opts.fields.clone(),
            symbols,
            thread_names,
            warnings,
        })
    }
}

/// How an array's contents are masked: by its element type, and for a `byte[]` whether it
/// is a UTF-16 string's.
pub(crate) fn units(elem: BasicType, utf16: bool) -> Units {
    match elem {
        BasicType::Byte if utf16 => Units::CharsLe,
        BasicType::Byte => Units::Bytes,
        BasicType::Char => Units::CharsBe,
        BasicType::Boolean => Units::Booleans,
        _ => Units::Raw,
    }
}

/// An array's contents as [`Plan::kept_values`] holds them.
pub(crate) fn value_key(units: Units, data: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(data.len() + 1);
    key.push(units.code());
    key.extend_from_slice(data);
    key
}

/// Whether `--keep` names this class: its exact name, or a package it is in.
pub(crate) fn matches_keep(keep: &[String], name: &str) -> bool {
    keep.iter().any(|k| name == k || name.strip_prefix(k.as_str()).is_some_and(|rest| rest.starts_with('.')))
}

fn class_plan(classes: &ClassTable, c: ClassIdx, opts: &Options, id_size: hprof::IdSize) -> ClassPlan {
    let name = &classes.get(c).name;
    let kept = matches_keep(&opts.keep, name);
    let mut plan = ClassPlan { kept, ..ClassPlan::default() };
    let mut offset = 0u32;
    let mut string = StringSlots::default();
    for owner in classes.chain(c) {
        let owner_name = classes.get(owner).name.as_str();
        for f in &classes.get(owner).fields {
            let here = (owner_name, f.name.as_str());
            if f.ty == BasicType::Object {
                let configuration = CONFIGURATION.contains(&here);
                if kept || (configuration && !opts.mask_thread_names) {
                    plan.keep_refs.push(offset);
                } else if configuration && opts.names.is_some() {
                    plan.name_refs.push(offset);
                }
            } else if !kept && opts.fields.contains(&f.ty) && !STRUCTURE.contains(&here) {
                plan.fields.push((offset, f.ty));
            }
            if owner_name == "java.lang.String" {
                match f.name.as_str() {
                    "value" => string.value = offset,
                    "coder" => string.coder = Some(offset),
                    "hash" if f.ty == BasicType::Int => string.hash = Some(offset),
                    "hashIsZero" if f.ty == BasicType::Boolean => string.hash_is_zero = Some(offset),
                    _ => {}
                }
            }
            offset = offset.saturating_add(f.ty.dump_bytes(id_size) as u32);
        }
    }
    if name == "java.lang.String" {
        plan.string = Some(string);
        // The hash is redone by resetting it, not masked with the other fields.
        plan.fields.retain(|(off, _)| Some(*off) != string.hash && Some(*off) != string.hash_is_zero);
    }
    plan
}
