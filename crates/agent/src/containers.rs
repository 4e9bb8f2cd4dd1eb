//! The containers a walk found, looked at between walks through JNI, with no pause: the
//! fields that hold each step of their chains (`Services$PriceService.listeners`, the names
//! a person searches the code for), and the size of each container's array now.
//!
//! A walk knows which object holds which; the names are found after the walk, by comparing
//! each holder's reference fields with the object it holds (`IsSameObject`), which needs no
//! knowledge of how JVMTI numbers fields. A heap too big to walk within `max_pause` can still
//! be read this way: each container's array, read through the field that holds it, says
//! whether the structure still grows, at the cost of a few JNI calls, whatever the heap's size.
//!
//! A walk on a forked copy leaves its objects in the copy: its chains are named from the
//! JVMTI index of each reference instead ([`Containers::name_by_index`]), by the order the
//! JVMTI specification gives a class's fields (`jvmtiHeapReferenceInfoField`).

use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use runstore::HolderChain;

use crate::classes::{CLASS_BIT, REFERENCE_BIT};
use crate::jvmti::{Env, FieldInfo, Jlong, Jni, Jobject};
use crate::walk::{ChainObjects, Step};

/// Containers named and read, at most: those of the biggest arrays.
const MAX_TRACKED: usize = 32;
/// A size is written when it changed, or at least this often.
const REWRITE_EVERY: Duration = Duration::from_secs(60);

/// A container followed between walks.
#[derive(Debug)]
struct Tracked {
    /// The agent's number for it (its link's serial).
    id: u64,
    /// A weak global reference to it: it does not keep the container alive.
    weak: Jobject,
    /// Its field that holds the big array.
    field: FieldInfo,
    /// The size last written, and when.
    written: Option<(u64, Instant)>,
}

/// The containers followed between walks, and the reference fields of classes seen so far.
#[derive(Debug, Default)]
pub(crate) struct Containers {
    /// Reference fields by class id: an instance's own and inherited ones, or a class's
    /// static ones (keyed with [`STATICS_KEY`] set).
    fields: FxHashMap<u64, Vec<FieldInfo>>,
    tracked: Vec<Tracked>,
    /// Per class id, its fields in JVMTI's numbering: the name of each reference field, `None`
    /// for the others (primitive fields, and the interfaces' fields that come first).
    indexed: FxHashMap<u32, Vec<Option<String>>>,
}

/// The tags of the objects of `chains` (the first object and its holders; a class's statics
/// by its mirror's two tags), sorted, each once: what to find again after a walk.
fn tags_of<'a>(chains: impl IntoIterator<Item = &'a ChainObjects>) -> Vec<Jlong> {
    let mut tags: Vec<Jlong> = Vec::new();
    for o in chains {
        tags.push(o.container.0);
        for step in &o.steps {
            match *step {
                Step::Object(tag, _) => tags.push(tag),
                Step::Statics(c) => {
                    tags.extend([CLASS_BIT | Jlong::from(c), CLASS_BIT | REFERENCE_BIT | Jlong::from(c)])
                }
                Step::Unnamed => {}
            }
        }
    }
    tags.sort_unstable();
    tags.dedup();
    tags
}

/// Elements of a container's array looked at for their class, at most.
const ELEMENT_SAMPLE: i32 = 32;

/// The class most elements of `container`'s array (in `field`) have, from up to
/// [`ELEMENT_SAMPLE`] elements spread over it, and about how many elements have it (for
/// containers a walk filtered by class found: it reports the references to the array, not
/// from it).
fn element_of(env: Env, jni: Jni, container: Jobject, field: &FieldInfo) -> Option<(String, u64)> {
    if !field.signature.starts_with("[L") && !field.signature.starts_with("[[") {
        return None;
    }
    let array = jni.object_field(container, field);
    if array.is_null() {
        return None;
    }
    let length = jni.array_length(array);
    let positions = ELEMENT_SAMPLE.min(length);
    let mut counts: FxHashMap<String, u32> = FxHashMap::default();
    for k in 0..positions {
        let e = jni.array_element(array, (i64::from(k) * i64::from(length) / i64::from(positions)) as i32);
        if e.is_null() {
            continue;
        }
        let class = jni.object_class(e);
        if let Ok(signature) = env.class_signature(class) {
            *counts.entry(crate::names::source_name(&signature)).or_default() += 1;
        }
        jni.delete_local(class);
        jni.delete_local(e);
    }
    jni.delete_local(array);
    let (class, n) = counts.into_iter().max_by_key(|c| c.1)?;
    // The share of the positions looked at, empty ones included (a list's spare capacity).
    Some((class, u64::from(n) * length.max(0) as u64 / positions.max(1) as u64))
}

/// The fields of class (or interface) `mirror` in the order JVMTI numbers them in heap
/// reference callbacks (`jvmtiHeapReferenceInfoField`): first the fields of every interface it
/// implements (an interface: every superinterface), each interface once, then the fields of
/// `java.lang.Object` and each class down to `mirror`'s own, each class's in the order of
/// `GetClassFields`. Static and instance fields alike take indexes; only reference fields get
/// a name (HotSpot's `ClassFieldMap` numbers them this way on JDK 17 and 25, which the forked
/// walk tests hold to the programs' fields).
fn jvmti_field_order(env: Env, jni: Jni, mirror: Jobject) -> Vec<Option<String>> {
    let mut classes = Vec::new();
    let mut interfaces: Vec<Jobject> = Vec::new();
    let mut pending: Vec<Jobject> = Vec::new();
    let mut c = mirror;
    while !c.is_null() {
        classes.push(c);
        pending.extend(env.implemented_interfaces(c).unwrap_or_default());
        c = jni.superclass(c);
    }
    while let Some(i) = pending.pop() {
        if interfaces.iter().any(|&k| jni.same(k, i)) {
            continue;
        }
        pending.extend(env.implemented_interfaces(i).unwrap_or_default());
        interfaces.push(i);
    }
    let mut order: Vec<Option<String>> = Vec::new();
    for i in &interfaces {
        order.extend(env.class_fields(*i).unwrap_or_default().into_iter().map(|_| None));
    }
    for class in classes.iter().rev() {
        order.extend(
            env.class_fields(*class).unwrap_or_default().into_iter().map(|f| f.is_reference().then_some(f.name)),
        );
    }
    order
}

/// Marks a class's static fields in [`Containers::fields`]' keys.
const STATICS_KEY: u64 = 1 << 32;

impl Containers {
    /// After a walk: names the fields of the chains of the biggest containers (`chains` and
    /// their `objects`, in the walk's order), and follows those containers from now on.
    pub(crate) fn after_walk(&mut self, env: Env, jni: Jni, chains: &mut [HolderChain], objects: &[ChainObjects]) {
        let n = chains.len().min(objects.len()).min(MAX_TRACKED);
        let tags = tags_of(&objects[..n]);
        if !jni.push_local_frame(tags.len() as i32 + 64) {
            return;
        }
        let found: FxHashMap<Jlong, Jobject> =
            env.objects_with_tags(&tags).unwrap_or_default().into_iter().map(|(o, t)| (t, o)).collect();
        let mut tracked = Vec::new();
        for (chain, o) in chains[..n].iter_mut().zip(objects) {
            let Some(&container) = found.get(&o.container.0) else { continue };
            if let Some(field) = self.array_field(env, jni, container, o.container.1) {
                chain.array_field = field.name.clone();
                if chain.element.is_empty() {
                    (chain.element, chain.elements) = element_of(env, jni, container, &field).unwrap_or_default();
                }
                let weak = match self.tracked.iter().position(|t| t.id == chain.id) {
                    Some(i) => self.tracked.swap_remove(i).weak,
                    None => jni.new_weak(container),
                };
                tracked.push(Tracked { id: chain.id, weak, field, written: None });
            }
            self.name_steps(env, jni, &chain.path, &mut chain.fields, o, container, &found);
        }
        jni.pop_local_frame();
        for gone in std::mem::replace(&mut self.tracked, tracked) {
            jni.delete_weak(gone.weak);
        }
    }

    /// Names the fields along `chains` from a walk on a forked copy, whose `objects` give each
    /// step's class and JVMTI index (the objects themselves stay in the copy): a field is named
    /// only when the index falls on a reference field of that class, else left empty.
    pub(crate) fn name_by_index(&mut self, env: Env, jni: Jni, chains: &mut [HolderChain], objects: &[ChainObjects]) {
        let mut classes: Vec<u32> = Vec::new();
        for o in objects {
            classes.push(o.container.1);
            classes.extend(o.steps.iter().filter_map(|s| match *s {
                Step::Object(_, c) | Step::Statics(c) => Some(c),
                Step::Unnamed => None,
            }));
        }
        classes.sort_unstable();
        classes.dedup();
        classes.retain(|c| !self.indexed.contains_key(c));
        if !classes.is_empty() && jni.push_local_frame(2 * classes.len() as i32 + 64) {
            let tags: Vec<Jlong> = classes
                .iter()
                .flat_map(|&c| [CLASS_BIT | Jlong::from(c), CLASS_BIT | REFERENCE_BIT | Jlong::from(c)])
                .collect();
            for (mirror, tag) in env.objects_with_tags(&tags).unwrap_or_default() {
                let Some(class) = crate::classes::class_id(tag) else { continue };
                if !self.indexed.contains_key(&class) && jni.push_local_frame(64) {
                    let order = jvmti_field_order(env, jni, mirror);
                    jni.pop_local_frame();
                    self.indexed.insert(class, order);
                }
            }
            jni.pop_local_frame();
        }
        let name = |indexed: &FxHashMap<u32, Vec<Option<String>>>, class: u32, index: i32| {
            let i = usize::try_from(index).ok()?;
            indexed.get(&class)?.get(i)?.clone()
        };
        for (chain, o) in chains.iter_mut().zip(objects) {
            if let Some(field) = name(&self.indexed, o.container.1, o.array_index) {
                chain.array_field = field;
            }
            chain.fields.resize(chain.path.len(), String::new());
            for (i, step) in o.steps.iter().enumerate() {
                let index = o.indexes.get(i).copied().unwrap_or(-1);
                let field = match *step {
                    _ if chain.path.get(i).is_some_and(|c| c.ends_with("[]")) => Some("[]".to_string()),
                    Step::Object(_, c) | Step::Statics(c) => name(&self.indexed, c, index),
                    Step::Unnamed => None,
                };
                if let (Some(field), Some(slot)) = (field, chain.fields.get_mut(i)) {
                    *slot = field;
                }
            }
        }
    }

    /// The fields along the chains of watched objects, through JNI after a walk: for each of
    /// `chains` (a path outwards and its objects, the watched object first), per step the field
    /// of that holder through which it holds the object before it (`[]` for an array's
    /// element, empty where not known: a holder the walk did not link, or one gone since).
    pub(crate) fn fields_along(
        &mut self,
        env: Env,
        jni: Jni,
        chains: &[(&[String], &ChainObjects)],
    ) -> Vec<Vec<String>> {
        let tags = tags_of(chains.iter().map(|c| c.1));
        let mut out: Vec<Vec<String>> = chains.iter().map(|(path, _)| vec![String::new(); path.len()]).collect();
        if !jni.push_local_frame(tags.len() as i32 + 64) {
            return out;
        }
        let found: FxHashMap<Jlong, Jobject> =
            env.objects_with_tags(&tags).unwrap_or_default().into_iter().map(|(o, t)| (t, o)).collect();
        for ((path, o), fields) in chains.iter().zip(&mut out) {
            if let Some(&object) = found.get(&o.container.0) {
                self.name_steps(env, jni, path, fields, o, object, &found);
            }
        }
        jni.pop_local_frame();
        out
    }

    /// The bytes of each followed container's array now, for those whose size changed since
    /// last written (or was written long ago): (container id, bytes). A container the
    /// collector freed is dropped.
    pub(crate) fn read(&mut self, env: Env, jni: Jni) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut gone = Vec::new();
        if !jni.push_local_frame(8) {
            return out;
        }
        for (i, t) in self.tracked.iter_mut().enumerate() {
            let container = jni.local_of_weak(t.weak);
            if container.is_null() {
                gone.push(i);
                continue;
            }
            let array = jni.object_field(container, &t.field);
            let bytes = if array.is_null() { 0 } else { env.object_size(array).unwrap_or(0) };
            jni.delete_local(array);
            jni.delete_local(container);
            let stale = t.written.is_none_or(|(b, at)| b != bytes || at.elapsed() >= REWRITE_EVERY);
            if stale {
                t.written = Some((bytes, Instant::now()));
                out.push((t.id, bytes));
            }
        }
        jni.pop_local_frame();
        for i in gone.into_iter().rev() {
            jni.delete_weak(self.tracked.swap_remove(i).weak);
        }
        out
    }

    /// Names into `fields`, for each holder along `path` (as objects in `o`) found again, its
    /// field that holds the step before it (`first`, the container or watched object, first).
    #[allow(clippy::too_many_arguments)]
    fn name_steps(
        &mut self,
        env: Env,
        jni: Jni,
        path: &[String],
        fields: &mut [String],
        o: &ChainObjects,
        first: Jobject,
        found: &FxHashMap<Jlong, Jobject>,
    ) {
        let mut held = first;
        for (i, step) in o.steps.iter().enumerate() {
            let (holder, key) = match *step {
                Step::Object(tag, class) => (found.get(&tag).copied(), u64::from(class)),
                Step::Statics(class) => {
                    let mirror = [CLASS_BIT, CLASS_BIT | REFERENCE_BIT]
                        .iter()
                        .find_map(|bits| found.get(&(bits | Jlong::from(class))).copied());
                    (mirror, STATICS_KEY | u64::from(class))
                }
                Step::Unnamed => (None, 0),
            };
            let Some(holder) = holder else { return };
            let is_array = path.get(i).is_some_and(|c| c.ends_with("[]"));
            let name = if is_array {
                Some("[]".to_string())
            } else {
                self.fields_of(env, jni, holder, key)
                    .iter()
                    .find(|f| {
                        let value = jni.object_field(holder, f);
                        let same = jni.same(value, held);
                        jni.delete_local(value);
                        same
                    })
                    .map(|f| f.name.clone())
            };
            if let (Some(name), Some(slot)) = (name, fields.get_mut(i)) {
                *slot = name;
            }
            held = holder;
        }
    }

    /// The field of `container` (of class id `class`) that holds its biggest array.
    fn array_field(&mut self, env: Env, jni: Jni, container: Jobject, class: u32) -> Option<FieldInfo> {
        let fields: Vec<FieldInfo> = self
            .fields_of(env, jni, container, u64::from(class))
            .into_iter()
            .filter(|f| f.signature.starts_with('['))
            .collect();
        let mut best: Option<(u64, FieldInfo)> = None;
        for f in fields {
            let array = jni.object_field(container, &f);
            let bytes = if array.is_null() { 0 } else { env.object_size(array).unwrap_or(0) };
            jni.delete_local(array);
            if best.as_ref().is_none_or(|b| bytes > b.0) {
                best = Some((bytes, f));
            }
        }
        best.filter(|b| b.0 > 0).map(|b| b.1)
    }

    /// The reference fields of `o`: its class's and inherited instance fields, or, for a
    /// class mirror (`key` with [`STATICS_KEY`]), the class's static fields; cached by `key`.
    fn fields_of(&mut self, env: Env, jni: Jni, o: Jobject, key: u64) -> Vec<FieldInfo> {
        if let Some(f) = self.fields.get(&key) {
            return f.clone();
        }
        let statics = key & STATICS_KEY != 0;
        let mut out = Vec::new();
        if statics {
            out.extend(env.class_fields(o).unwrap_or_default().into_iter().filter(|f| f.is_static && f.is_reference()));
        } else {
            let mut class = jni.object_class(o);
            while !class.is_null() {
                out.extend(
                    env.class_fields(class)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|f| !f.is_static && f.is_reference()),
                );
                let up = jni.superclass(class);
                jni.delete_local(class);
                class = up;
            }
        }
        self.fields.insert(key, out.clone());
        out
    }
}
