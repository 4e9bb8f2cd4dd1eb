//! Instance counts and JVM shallow bytes per class for everything in a dump, without
//! keeping anything per object: the fast path behind `leakscope histogram`.

use graph::Progress;
use hprof::{BasicType, Header, SubRecord, Value};

use crate::classes::{ClassIdx, ClassKind, ClassTable};
use crate::error::Error;
use crate::index::DumpIndex;
use crate::layout::{self, GapEvidence, LayoutSpec, VmLayout};
use crate::scan::{Keep, LenCounts, RawKind, Scan};
use crate::source::Dump;
use crate::warnings::{WarningKind, Warnings};

/// Count and bytes of one class's instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassTotals {
    /// Number of instances.
    pub instances: u64,
    /// Sum of their shallow sizes in the JVM.
    pub shallow_bytes: u64,
}

/// Per-class totals over every object in a dump, reachable or not (as `jcmd GC.class_histogram` counts).
#[derive(Debug, Clone)]
pub struct Census {
    /// The dump's header.
    pub header: Header,
    /// The object layout used for sizes.
    pub layout: VmLayout,
    /// The classes.
    pub classes: ClassTable,
    /// Totals per class, indexed by [`ClassIdx`].
    pub totals: Vec<ClassTotals>,
    /// Problems skipped.
    pub warnings: Warnings,
    /// Bytes of the file that could not be read.
    pub unread_bytes: u64,
}

/// Options for reading a dump.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Layout parameters the user fixed; the rest are inferred.
    pub layout: LayoutSpec,
    /// Which heap dump of a file that holds several (1 = the oldest); the last by default.
    pub dump: Option<usize>,
}

impl Census {
    /// Counts every object of `dump` by class.
    pub fn build(dump: &Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<Census, Error> {
        let data = dump.data();
        let mut ix = DumpIndex::build(data)?;
        ix.select(opts.dump)?;
        let scan = Scan::run(dump, &ix, Keep::Nothing, progress);
        Ok(Census::from_scan(&ix, scan, opts, data.len() as u64)?.0)
    }

    /// Finishes a scan: class table, inferred layout, sizes, totals. Also hands back what the
    /// snapshot builder needs of the scan.
    pub(crate) fn from_scan(
        ix: &DumpIndex<'_>,
        mut scan: Scan,
        opts: &ReadOptions,
        file_bytes: u64,
    ) -> Result<(Census, Scan), Error> {
        let mut warnings = ix.warnings.clone();
        warnings.merge(std::mem::take(&mut scan.warnings));
        let unread_bytes = ix.unread_bytes + scan.unread_bytes;
        let objects: u64 = scan.instances.values().map(|a| a.count).sum::<u64>()
            + scan.obj_arrays.values().chain(scan.prim_arrays.values()).flat_map(|l| l.values()).sum::<u64>();
        if let Some(first) = ix.first_error.clone().or(scan.first_error.clone()) {
            if objects == 0 {
                return Err(Error::NothingReadable { first });
            }
            if unread_bytes > file_bytes / 2 {
                return Err(Error::MostlyUnreadable { first, unread_bytes, file_bytes });
            }
        }
        let mut classes = ClassTable::build(ix, std::mem::take(&mut scan.classes), &mut warnings);
        let layout = layout::infer(&scan.evidence, opts.layout, ix.header.id_size);
        classes.apply_layout(&layout);
        let mut c = Census { header: ix.header, layout, classes, totals: Vec::new(), warnings, unread_bytes };
        c.count_instances(&scan);
        c.count_arrays(&scan);
        c.count_mirrors();
        Ok((c, scan))
    }

    fn totals_mut(&mut self, class: ClassIdx) -> &mut ClassTotals {
        if self.totals.len() < self.classes.len() {
            self.totals.resize(self.classes.len(), ClassTotals::default());
        }
        &mut self.totals[class.index()]
    }

    fn count_instances(&mut self, scan: &Scan) {
        let mut counted = Vec::with_capacity(scan.instances.len());
        for (&class_id, acc) in &scan.instances {
            let class = match self.classes.by_id(class_id) {
                Some(c) => c,
                None => {
                    self.warnings
                        .add(WarningKind::UnknownClass, acc.count, None, || format!("class id 0x{class_id:x}"));
                    let c = self.classes.placeholder(
                        class_id,
                        format!("<unknown class 0x{class_id:x}>"),
                        ClassKind::Instance,
                    );
                    self.classes.get_mut(c).instance_bytes = self.layout.instance_bytes(0);
                    c
                }
            };
            counted.push((class, acc.count, acc.gaps));
        }
        self.correct_sizes(&counted);
        for (class, count, _) in counted {
            let size = self.classes.get(class).instance_bytes;
            let t = self.totals_mut(class);
            t.instances += count;
            t.shallow_bytes += count * size;
        }
    }

    /// Replaces model sizes by what the gaps between objects show, ancestors first. A class
    /// without usable gaps inherits the correction of its nearest corrected ancestor:
    /// injected fields and `@Contended` padding are inherited too.
    fn correct_sizes(&mut self, counted: &[(ClassIdx, u64, Option<GapEvidence>)]) {
        let mut evidence: Vec<Option<GapEvidence>> = vec![None; self.classes.len()];
        for &(class, _, ev) in counted {
            evidence[class.index()] = ev;
        }
        let mut order: Vec<(usize, ClassIdx)> =
            self.classes.iter().map(|(i, _)| (self.classes.chain(i).count(), i)).collect();
        order.sort_unstable();
        let mut delta: Vec<Option<i64>> = vec![None; self.classes.len()];
        for (_, class) in order {
            let inherited = self.classes.chain(class).skip(1).find_map(|a| delta[a.index()]);
            let model = self.classes.get(class).instance_bytes;
            let padded = inherited.is_some_and(layout::is_padding);
            let own = layout::corrected_instance_bytes(model, evidence[class.index()], padded, &self.layout);
            delta[class.index()] = own.map(|size| size as i64 - model as i64).or(inherited);
        }
        for (i, d) in delta.into_iter().enumerate() {
            let c = self.classes.get_mut(ClassIdx(i as u32));
            c.instance_bytes = c.instance_bytes.saturating_add_signed(d.unwrap_or(0));
        }
    }

    fn count_arrays(&mut self, scan: &Scan) {
        for (&class_id, lens) in &scan.obj_arrays {
            let class = self.classes.by_id(class_id).unwrap_or_else(|| {
                let n: u64 = lens.values().sum();
                self.warnings.add(WarningKind::UnknownClass, n, None, || format!("array class id 0x{class_id:x}"));
                self.classes.placeholder(
                    class_id,
                    format!("<unknown array class 0x{class_id:x}>"),
                    ClassKind::ObjectArray,
                )
            });
            self.add_arrays(class, BasicType::Object, lens);
        }
        for (&elem, lens) in &scan.prim_arrays {
            let class = self.classes.primitive_array(elem);
            self.add_arrays(class, elem, lens);
        }
    }

    fn add_arrays(&mut self, class: ClassIdx, elem: BasicType, lens: &LenCounts) {
        let layout = self.layout;
        let t = self.totals_mut(class);
        for (&len, &n) in lens {
            t.instances += n;
            t.shallow_bytes += n * layout.array_bytes(elem, u64::from(len));
        }
    }

    /// Classes are mirrors in the JVM (`java.lang.Class` instances holding the statics); the
    /// dump writes them as class dumps, so their sizes are estimated from the statics.
    fn count_mirrors(&mut self) {
        let Some(class_class) = self.classes.find("java.lang.Class") else {
            return;
        };
        let base = self.classes.get(class_class).instance_bytes;
        let layout = self.layout;
        let mut bytes = 0;
        let mut n = 0;
        for (_, c) in self.classes.iter().filter(|(_, c)| c.dump_offset.is_some()) {
            n += 1;
            bytes += mirror_bytes(base, c.statics.iter().map(|s| s.value), &layout);
        }
        let t = self.totals_mut(class_class);
        t.instances += n;
        t.shallow_bytes += bytes;
    }

    /// Total instances and bytes over all classes.
    pub fn total(&self) -> ClassTotals {
        self.totals.iter().fold(ClassTotals::default(), |a, t| ClassTotals {
            instances: a.instances + t.instances,
            shallow_bytes: a.shallow_bytes + t.shallow_bytes,
        })
    }

    /// Totals of one class (zero for classes without instances).
    pub fn of(&self, class: ClassIdx) -> ClassTotals {
        self.totals.get(class.index()).copied().unwrap_or_default()
    }
}

/// Estimated size of a class mirror: `java.lang.Class`'s own size plus its statics.
pub(crate) fn mirror_bytes(class_bytes: u64, statics: impl Iterator<Item = Value>, layout: &VmLayout) -> u64 {
    let statics: u64 = statics.map(|v| u64::from(layout.value_bytes(v.ty()))).sum();
    layout.align_up(class_bytes + statics)
}

/// Class and JVM shallow size of any object, from its record or from what the heap pass kept.
pub(crate) struct Sizes<'a> {
    census: &'a Census,
    prims: [Option<ClassIdx>; 8],
    class_class: Option<ClassIdx>,
}

impl<'a> Sizes<'a> {
    pub(crate) fn new(census: &'a Census) -> Sizes<'a> {
        let classes = &census.classes;
        let mut prims = [None; 8];
        for (slot, t) in prims.iter_mut().zip(BasicType::PRIMITIVES) {
            *slot = classes.iter().find(|(_, c)| c.kind == ClassKind::PrimitiveArray(t)).map(|(i, _)| i);
        }
        Sizes { census, prims, class_class: classes.find("java.lang.Class") }
    }

    /// An instance, object array or primitive array, as the heap pass saw it. Unknown class
    /// ids, which the census turned into placeholders, only miss on a dump without classes.
    pub(crate) fn of_raw(&self, raw: RawKind, length: u32) -> (ClassIdx, u64) {
        let classes = &self.census.classes;
        let layout = &self.census.layout;
        let fallback = ClassIdx(0);
        match raw {
            RawKind::Instance(id) => {
                let c = classes.by_id(id).unwrap_or(fallback);
                (c, classes.get(c).instance_bytes)
            }
            RawKind::ObjArray(id) => {
                (classes.by_id(id).unwrap_or(fallback), layout.array_bytes(BasicType::Object, u64::from(length)))
            }
            RawKind::PrimArray(elem) => {
                let slot = BasicType::PRIMITIVES.iter().position(|&p| p == elem).unwrap_or(0);
                (self.prims[slot].unwrap_or(fallback), layout.array_bytes(elem, u64::from(length)))
            }
        }
    }

    /// A class mirror holding these statics.
    pub(crate) fn mirror(&self, statics: impl Iterator<Item = Value>) -> (ClassIdx, u64) {
        let base = self.class_class.map_or(0, |cc| self.census.classes.get(cc).instance_bytes);
        (self.class_class.unwrap_or(ClassIdx(0)), mirror_bytes(base, statics, &self.census.layout))
    }

    /// The object a record describes (class 0 and no bytes for roots and dump info).
    pub(crate) fn of_record(&self, rec: &SubRecord<'_>) -> (ClassIdx, u64) {
        match rec {
            SubRecord::Instance { head, .. } => self.of_raw(RawKind::Instance(head.class_id), 0),
            SubRecord::ObjArray { head, .. } => self.of_raw(RawKind::ObjArray(head.class_id), head.length),
            SubRecord::PrimArray { head, elem, .. } => self.of_raw(RawKind::PrimArray(*elem), head.length),
            SubRecord::Class(d) => self.mirror(d.statics.iter().map(|s| s.value)),
            SubRecord::Root(_) | SubRecord::HeapDumpInfo(_) => (ClassIdx(0), 0),
        }
    }
}
