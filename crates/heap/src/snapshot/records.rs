//! Decoding objects' records: finding a reference's target by address, reading a chunk's
//! classes, sizes and references, and a record's labelled references.

use graph::Ints;
use hprof::{Cursor, SubRecord, Value};

use crate::addr_index::{AddrRank, Buckets};
use crate::census::{Census, Sizes};
use crate::classes::{for_each_field_ref, ClassIdx, ClassTable};
use crate::refs::Entry;
use crate::source::Dump;
use crate::warnings::WarningKind;

use super::model::*;
use super::order::Objects;

/// How the build finds an object's index by address: a rank bitmap over the heap's span
/// when it is smaller than the sorted addresses (2 bits per aligned slot, one cache line per
/// lookup; the addresses are dropped before the passes), else a bucketed search of them.
/// Out of core the search's random reads of 8 bytes per object thrashed: Tomcat's 30 M
/// objects under a 203 MiB limit spent 208 s reading objects, 11 s in memory.
pub(crate) enum Lookup<'a> {
    Dense(AddrRank),
    Sorted(Ints, &'a Buckets),
}

impl<'a> Lookup<'a> {
    pub(super) fn new(addrs: Ints, index: &'a Buckets) -> Lookup<'a> {
        // Only where the bitmap is smaller than the addresses (8 bytes an object).
        match AddrRank::dense_over(addrs.len(), |i| addrs.get(i), addrs.len() as u64 * 8) {
            Some(rank) => Lookup::Dense(rank),
            None => Lookup::Sorted(addrs, index),
        }
    }

    /// The index of the object at `addr`, if there is one.
    #[inline]
    fn find(&self, addr: u64) -> Option<usize> {
        match self {
            Lookup::Dense(rank) => rank.rank(addr),
            Lookup::Sorted(addrs, index) => index.find(|k| addrs.get(k), addr),
        }
    }
}

pub(crate) struct Ctx<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) id_size: hprof::IdSize,
    pub(crate) census: &'a Census,
    lookup: &'a Lookup<'a>,
    pub(crate) offsets: &'a Ints,
    pub(crate) sizes: Sizes<'a>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(data: &'a [u8], census: &'a Census, lookup: &'a Lookup<'a>, offsets: &'a Ints) -> Ctx<'a> {
        Ctx { data, id_size: census.header.id_size, census, lookup, offsets, sizes: Sizes::new(census) }
    }

    /// Reads the objects from `start`, from `objects`: class, size in 8-byte units, number of
    /// references that resolve and whether the first is a Reference's referent into the
    /// windows, and the references that resolve, in order, into the vector returned.
    pub(super) fn read_chunk(
        &self,
        start: usize,
        objects: &mut Objects<'_>,
        class: &mut graph::IntsWindow<'_>,
        size8: &mut graph::IntsWindow<'_>,
        counts: &mut graph::IntsWindow<'_>,
        referent: &mut [u64],
    ) -> (ChunkFacts, Vec<u64>) {
        let mut f = ChunkFacts { mirrors: Vec::new(), big_sizes: Vec::new(), warnings: Default::default() };
        let mut targets = Vec::new();
        let classes = &self.census.classes;
        let mut entry = Entry::default();
        for i in 0..class.len() {
            let at = start + i;
            // The object's class and size, its references (non-null, in edge order), whether
            // the first is a Reference's referent, and whether an instance's field bytes have
            // another length than its class's fields.
            let (c, bytes, referent_first, length_mismatch) = match objects.entry(at, &mut entry) {
                Some(e) => {
                    // The stream is read only where the early class table is the census's.
                    let (c, bytes) = match e.class {
                        Some(c) => self.sizes.of_class(c, e.kind, e.len),
                        None => self.sizes.of_raw(e.kind, e.len),
                    };
                    (c, bytes, e.referent_first, e.length_mismatch)
                }
                None => {
                    let Some(rec) = read_at(self.data, self.offsets.get(at), self.id_size) else { continue };
                    let (c, bytes) = self.sizes.of_record(&rec);
                    if let SubRecord::Class(d) = &rec {
                        f.mirrors.push((i as u32, d.head.class_id));
                    }
                    entry.refs.clear();
                    let mut first = None;
                    for_each_ref(&rec, classes, self.id_size, |label, id| {
                        first = first.or(Some(label));
                        entry.refs.push(id);
                    });
                    let cls = classes.get(c);
                    let length_mismatch = match &rec {
                        SubRecord::Instance { values, .. } => {
                            values.len() as u32 != cls.values_bytes && cls.dump_offset.is_some()
                        }
                        _ => false,
                    };
                    (c, bytes, first.is_some_and(|l| is_referent_label(classes, c, l)), length_mismatch)
                }
            };
            class.set(i, u64::from(c.0));
            let units = bytes / 8;
            if units >= BIG_SIZE8 {
                f.big_sizes.push((i as u32, units));
            }
            size8.set(i, units.min(BIG_SIZE8));
            let mut n = 0u32;
            for (k, &id) in entry.refs.iter().enumerate() {
                match self.lookup.find(id) {
                    Some(t) => {
                        targets.push(t as u64);
                        if k == 0 && referent_first {
                            referent[i / 64] |= 1 << (i % 64);
                        }
                        n += 1;
                    }
                    None => {
                        let off = self.offsets.get(at);
                        f.warnings.add(WarningKind::DanglingReference, 1, Some(off), || format!("id 0x{id:x}"))
                    }
                }
            }
            counts.set(i, u64::from(n));
            if length_mismatch {
                let off = self.offsets.get(at);
                f.warnings.add(WarningKind::FieldLengthMismatch, 1, Some(off), || classes.get(c).name.clone());
            }
        }
        (f, targets)
    }
}

pub(crate) fn is_referent_label(classes: &ClassTable, class: ClassIdx, label: EdgeLabel) -> bool {
    let c = classes.get(class);
    match (label, c.referent_slot) {
        (EdgeLabel::Field { owner, field }, Some(s)) => c.ref_slots[s].owner == owner && c.ref_slots[s].field == field,
        _ => false,
    }
}

/// Releases the file pages a finished chunk of the edge pass read, and the chunk's offsets.
pub(crate) fn release_block(dump: &Dump, offsets: &Ints, range: std::ops::Range<usize>) {
    let lo = range.clone().map(|o| offsets.get(o)).min().unwrap_or(0);
    let hi = range.clone().map(|o| offsets.get(o)).max().unwrap_or(0);
    dump.release(lo, (hi - lo) as usize);
    offsets.release_range(range);
}

/// Reads the sub-record at absolute offset `off`.
pub(crate) fn read_at(data: &[u8], off: u64, id_size: hprof::IdSize) -> Option<SubRecord<'_>> {
    let start = usize::try_from(off).ok()?;
    let mut c = Cursor::new(data.get(start..)?, off, id_size);
    SubRecord::read(&mut c).ok()
}

/// Calls `f` with every non-null reference of an object record, in edge order: a
/// Reference's referent first, then the other fields; elements; or a class's statics,
/// superclass and loader. The one place that decides what a reference is.
pub(crate) fn for_each_ref(
    rec: &SubRecord<'_>,
    classes: &ClassTable,
    id_size: hprof::IdSize,
    mut f: impl FnMut(EdgeLabel, u64),
) {
    match rec {
        SubRecord::Instance { head, values } => {
            let Some(class) = classes.by_id(head.class_id) else {
                return;
            };
            let c = classes.get(class);
            for_each_field_ref(c, values, id_size, |s, id| {
                f(EdgeLabel::Field { owner: c.ref_slots[s].owner, field: c.ref_slots[s].field }, id)
            });
        }
        SubRecord::ObjArray { elements, .. } => {
            for (i, id) in elements.iter().enumerate() {
                if id != 0 {
                    f(EdgeLabel::Element(i as u64), id);
                }
            }
        }
        SubRecord::Class(d) => {
            // Android's overhead pseudo-array is part of the class object, not a referent.
            let overhead = classes.by_id(d.head.class_id).and_then(|c| classes.get(c).overhead_static);
            for (i, s) in d.statics.iter().enumerate() {
                if let Value::Object(id) = s.value {
                    if id != 0 && overhead != Some(i as u16) {
                        f(EdgeLabel::Static(i as u16), id);
                    }
                }
            }
            if d.head.super_id != 0 {
                f(EdgeLabel::Super, d.head.super_id);
            }
            if d.head.loader_id != 0 {
                f(EdgeLabel::Loader, d.head.loader_id);
            }
        }
        _ => {}
    }
}

/// What the first pass learns about a chunk besides the per-object arrays.
pub(super) struct ChunkFacts {
    /// Class mirrors in this chunk: position in the chunk and class id.
    pub(super) mirrors: Vec<(u32, u64)>,
    /// Objects of [`BIG_SIZE8`] units and more: position in the chunk and size in 8-byte units.
    pub(super) big_sizes: Vec<(u32, u64)>,
    pub(super) warnings: crate::warnings::Warnings,
}
