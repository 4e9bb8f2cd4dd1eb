//! One object looked into, as MAT's inspector shows it: its fields with their values, its
//! array elements, the objects that reference it (strong ones first), its dominator, its
//! sizes and its shortest paths from GC roots.

use graph::Progress;
use heap::{ObjIdx, RefStrength, Snapshot, Value};
use rayon::prelude::*;
use report::{ArrayPage, DominatorRow, ElementRow, FieldRow, ObjectRef, ObjectView, ReferrerPage, ReferrerRow};

use crate::closures::Closures;
use crate::paths::PathFinder;
use crate::retention::Retention;

/// Characters of a string shown with `--show-values`.
pub const VALUE_CHARS: usize = 200;

/// Which part of an object's elements and referrers to show.
#[derive(Debug, Clone, Copy)]
pub struct InspectPage {
    /// The first array element shown.
    pub elements_from: u64,
    /// The first referrer shown.
    pub referrers_from: u64,
    /// Elements and referrers per page.
    pub limit: usize,
    /// Strings' text and primitive arrays' contents (user data) are shown.
    pub show_values: bool,
}

/// The analyses of one snapshot that looking into its objects draws on.
pub struct Inspector<'a, 's> {
    snap: &'s Snapshot,
    retention: &'a Retention,
    paths: &'a PathFinder<'s>,
    closures: &'a Closures<'s>,
    /// Objects each object immediately dominates.
    counts: Vec<u32>,
}

impl<'a, 's> Inspector<'a, 's> {
    /// Counts what each object dominates (one pass over the tree).
    pub fn new(
        snap: &'s Snapshot,
        retention: &'a Retention,
        paths: &'a PathFinder<'s>,
        closures: &'a Closures<'s>,
        progress: &dyn Progress,
    ) -> Inspector<'a, 's> {
        progress.start("dominated objects per object", 1);
        let counts = retention.child_counts();
        progress.finish();
        Inspector { snap, retention, paths, closures, counts }
    }

    /// `o` as a dominator tree row, its share of `of` bytes.
    pub fn row(&self, o: ObjIdx, of: u64) -> DominatorRow {
        crate::dominator_tree::dominator_row(self.snap, self.retention, u64::from(self.counts[o.index()]), o, of)
    }

    /// Everything about `o`, with one page of its elements and referrers.
    pub fn view(&self, o: ObjIdx, page: InspectPage) -> ObjectView {
        let (s, r) = (self.snap, self.retention);
        let id = report::ObjectId(s.address(o));
        let roots = s
            .roots
            .iter()
            .filter(|x| x.object == o)
            .map(|x| crate::paths::root_label(s, x))
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        ObjectView {
            object: self.row(o, r.live_bytes()),
            live: r.is_live(o),
            dominator: r.immediate_dominator(o).map(|d| self.row(d, r.live_bytes())),
            sizes: self.closures.sizes(&[o]).totals(),
            roots,
            fields: self.fields(o, page.show_values),
            array: self.array(o, page),
            referrers: self.referrers(o, page),
            paths: self.paths.report(format!("id:{id}"), &[o], 3),
            value: if page.show_values { s.string_value(o, VALUE_CHARS) } else { None },
        }
    }

    /// What a reference to `id` points at, if `id` is an object of the dump.
    fn target(&self, id: u64, show_values: bool) -> Option<ObjectRef> {
        let s = self.snap;
        let o = s.find(id).filter(|_| id != 0)?;
        Some(ObjectRef {
            id: report::ObjectId(s.address(o)),
            class: s.type_label(o),
            retained_bytes: self.retention.retained_bytes(o),
            value: if show_values { s.string_value(o, VALUE_CHARS) } else { None },
        })
    }

    fn fields(&self, o: ObjIdx, show_values: bool) -> Vec<FieldRow> {
        let s = self.snap;
        s.slots(o)
            .into_iter()
            .map(|f| {
                let (ty, value, target) = match f.value {
                    Value::Object(id) => ("Object", None, self.target(id, show_values)),
                    Value::Primitive(ty, bits) => (ty.java_name(), Some(primitive_text(ty, bits)), None),
                };
                FieldRow {
                    name: f.name,
                    declared_by: s.classes().get(f.declared_by).name.clone(),
                    is_static: f.is_static,
                    ty: ty.to_owned(),
                    value,
                    target,
                }
            })
            .collect()
    }

    fn array(&self, o: ObjIdx, page: InspectPage) -> Option<ArrayPage> {
        let (elem, length, values) = self.snap.array_elements(o, page.elements_from, page.limit)?;
        let hidden = elem != heap::BasicType::Object && !page.show_values;
        let elements = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let (value, target) = match v {
                    Value::Object(id) => (None, self.target(id, page.show_values)),
                    Value::Primitive(ty, bits) => ((!hidden).then(|| primitive_text(ty, bits)), None),
                };
                ElementRow { index: page.elements_from + i as u64, value, target }
            })
            .filter(|e| !hidden || e.target.is_some())
            .collect();
        Some(ArrayPage {
            element_type: elem.java_name().to_owned(),
            length,
            offset: page.elements_from,
            elements,
            values_hidden: hidden,
        })
    }

    /// Every object with a reference to `o`, found in one parallel pass over the references;
    /// strong ones first, then the biggest retained sizes.
    fn referrers(&self, o: ObjIdx, page: InspectPage) -> ReferrerPage {
        let (s, r) = (self.snap, self.retention);
        let n = s.object_count();
        let mut found: Vec<(ObjIdx, RefStrength)> = (0..n)
            .into_par_iter()
            .flat_map_iter(|i| {
                let from = ObjIdx(i);
                s.edges(from).filter(move |e| e.target == o).map(move |e| (from, e.strength))
            })
            .collect();
        found.sort_by(|a, b| {
            (a.1 != RefStrength::Strong)
                .cmp(&(b.1 != RefStrength::Strong))
                .then(r.retained_bytes(b.0).cmp(&r.retained_bytes(a.0)))
                .then(a.0.cmp(&b.0))
        });
        found.dedup_by_key(|f| f.0);
        let strong = found.iter().filter(|f| f.1 == RefStrength::Strong).count() as u64;
        let rows = found
            .iter()
            .skip(page.referrers_from as usize)
            .take(page.limit)
            .filter_map(|&(from, strength)| {
                let field = s
                    .labeled_edges(from)
                    .into_iter()
                    .find(|(_, e)| e.target == o && e.strength == strength)
                    .map_or_else(|| "?".into(), |(label, _)| s.label_name(from, label));
                Some(ReferrerRow {
                    from: self.target(s.address(from), page.show_values)?,
                    field,
                    strength: strength.name().to_owned(),
                })
            })
            .collect();
        ReferrerPage { total: found.len() as u64, strong, offset: page.referrers_from, rows }
    }
}

/// A primitive as Java prints it, from the raw bits the dump holds.
pub fn primitive_text(ty: heap::BasicType, bits: u64) -> String {
    use heap::BasicType as T;
    match ty {
        T::Boolean => (bits != 0).to_string(),
        T::Char => {
            char::from_u32(bits as u32).map_or_else(|| format!("'\\u{:04x}'", bits as u16), |c| format!("{c:?}"))
        }
        T::Float => f32::from_bits(bits as u32).to_string(),
        T::Double => f64::from_bits(bits).to_string(),
        T::Byte => (bits as u8 as i8).to_string(),
        T::Short => (bits as u16 as i16).to_string(),
        T::Int => (bits as u32 as i32).to_string(),
        T::Long => (bits as i64).to_string(),
        T::Object => format!("0x{bits:x}"),
    }
}
