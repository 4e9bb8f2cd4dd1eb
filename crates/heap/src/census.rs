//! Instance counts and JVM shallow bytes per class for everything in a dump, without
//! keeping anything per object: the fast path behind `leakscope histogram`.

use std::collections::BTreeMap;

use graph::Progress;
use hprof::{BasicType, Header, SubRecord, Value};

use crate::classes::{ClassIdx, ClassKind, ClassTable};
use crate::error::Error;
use crate::index::DumpIndex;
use crate::layout::{self, AndroidRuntime, GapEvidence, LayoutBasis, LayoutSpec, VmLayout};
use crate::raw::RawKind;
use crate::scan::{HeapId, Keep, LenCounts, Scan};
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
    /// Why that layout.
    pub layout_basis: LayoutBasis,
    /// Android: totals per heap (app, zygote, image), by heap id (objects written before any
    /// heap was named first); empty for other dumps.
    pub heaps: Vec<HeapTotals>,
    /// The classes.
    pub classes: ClassTable,
    /// Totals per class, indexed by [`ClassIdx`].
    pub totals: Vec<ClassTotals>,
    /// Problems skipped.
    pub warnings: Warnings,
    /// Bytes of the file that could not be read.
    pub unread_bytes: u64,
}

/// One Android heap's share of a census.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapTotals {
    /// The name the dump gives it (`app`, `zygote`, `image`; `default` for objects written
    /// before any heap was named).
    pub name: String,
    /// Totals per class, indexed by [`ClassIdx`].
    pub totals: Vec<ClassTotals>,
}

impl HeapTotals {
    /// Totals over all classes.
    pub fn total(&self) -> ClassTotals {
        sum(&self.totals)
    }
}

/// The static fields by which Android points a class at its overhead pseudo-array.
const OVERHEAD_STATICS: [(&str, AndroidRuntime); 2] =
    [("$staticOverhead", AndroidRuntime::Dalvik), ("$classOverhead", AndroidRuntime::Art)];

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
        let mut ix = DumpIndex::of(dump)?;
        ix.select(opts.dump)?;
        let scan = Scan::run(dump, &ix, Keep::Nothing, None, &graph::Placement::memory(), progress);
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
        let (layout, layout_basis) = if ix.header.version == hprof::Version::V103 {
            let runtime = claim_overhead(&mut classes, &mut scan);
            let layout = match runtime {
                AndroidRuntime::Dalvik => VmLayout::DALVIK,
                AndroidRuntime::Art => VmLayout::ART,
            };
            (layout, LayoutBasis::Android(runtime))
        } else if scan.gaps > 0 && scan.tiny_gaps * 2 > scan.gaps {
            let layout = layout::assumed(opts.layout, VmLayout::DEFAULT_64);
            let detail = format!("sizes assume 64-bit HotSpot: {}; the layout flags override", layout.describe());
            warnings.add(WarningKind::IdsNotAddresses, 1, None, || detail);
            (layout, LayoutBasis::SequenceIds)
        } else {
            layout::infer(&scan.evidence, opts.layout, ix.header.id_size)
        };
        classes.apply_layout(&layout, matches!(layout_basis, LayoutBasis::Android(_)));
        let mut c = Census {
            header: ix.header,
            layout,
            layout_basis,
            heaps: Vec::new(),
            classes,
            totals: Vec::new(),
            warnings,
            unread_bytes,
        };
        c.count_instances(&scan);
        c.count_arrays(&scan);
        c.count_mirrors();
        c.count_heaps(ix, &scan);
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
        if matches!(self.layout_basis, LayoutBasis::Gaps { .. } | LayoutBasis::NoEvidence) {
            self.correct_sizes(&counted);
        }
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
    /// dump writes them as class dumps, so their sizes are estimated from what they embed.
    fn count_mirrors(&mut self) {
        let android = matches!(self.layout_basis, LayoutBasis::Android(_));
        let layout = self.layout;
        for i in 0..self.classes.len() {
            let c = self.classes.get_mut(ClassIdx(i as u32));
            if !android {
                c.embedded_bytes = c.statics.iter().map(|s| u64::from(layout.value_bytes(s.value.ty()))).sum();
            }
        }
        let Some(class_class) = self.classes.find("java.lang.Class") else {
            return;
        };
        let base = self.classes.get(class_class).instance_bytes;
        let mut bytes = 0;
        let mut n = 0;
        for (_, c) in self.classes.iter().filter(|(_, c)| c.dump_offset.is_some()) {
            n += 1;
            bytes += mirror_bytes(base, c.embedded_bytes, &layout);
        }
        let t = self.totals_mut(class_class);
        t.instances += n;
        t.shallow_bytes += bytes;
    }

    /// Android: the same totals split by the heap each object was written in.
    fn count_heaps(&mut self, ix: &DumpIndex<'_>, scan: &Scan) {
        if scan.by_heap.is_empty() && scan.class_heaps.is_empty() {
            return;
        }
        let sizes = Sizes::new(self);
        let mut adds = Vec::new();
        for ((h, raw), lens) in &scan.by_heap {
            for (&len, &n) in lens {
                let (class, bytes) = sizes.of_raw(*raw, len);
                adds.push((*h, class, n, n * bytes));
            }
        }
        for &(class_id, h) in &scan.class_heaps {
            if let Some(c) = self.classes.by_id(class_id) {
                let (class, bytes) = sizes.mirror(c);
                adds.push((h, class, 1, bytes));
            }
        }
        // By heap id: objects written before any heap was named (`None`) first.
        let mut heaps: BTreeMap<HeapId, Vec<ClassTotals>> = BTreeMap::new();
        for (h, class, n, bytes) in adds {
            let t =
                &mut heaps.entry(h).or_insert_with(|| vec![ClassTotals::default(); self.classes.len()])[class.index()];
            t.instances += n;
            t.shallow_bytes += bytes;
        }
        self.heaps = heaps.into_iter().map(|(h, totals)| HeapTotals { name: heap_name(ix, scan, h), totals }).collect();
    }

    /// Keeps only the objects of the Android heap named `name` (`all` keeps everything);
    /// the error lists the heaps there are.
    pub fn select_heap(&mut self, name: &str) -> Result<(), String> {
        if name == "all" {
            return Ok(());
        }
        match self.heaps.iter().find(|h| h.name == name) {
            Some(h) => {
                self.totals = h.totals.clone();
                Ok(())
            }
            None if self.heaps.is_empty() => Err("the dump names no heaps (only Android's dumps do)".into()),
            None => {
                let names: Vec<&str> = self.heaps.iter().map(|h| h.name.as_str()).collect();
                Err(format!("the dump has no heap named {name:?}; it has {}, or all", names.join(", ")))
            }
        }
    }

    /// The layout sizes follow, and why: `compressed oops, ... (inferred from 512 arrays'
    /// address gaps)`, or an Android runtime's layout in its own terms.
    pub fn describe_layout(&self) -> String {
        match self.layout_basis {
            LayoutBasis::Android(rt) => {
                format!("{}; {}", self.layout.describe_android(rt), self.layout_basis.describe())
            }
            basis => format!("{} ({})", self.layout.describe(), basis.describe()),
        }
    }

    /// The layout sizes follow, in a few words (an Android runtime's layout in its terms).
    pub fn layout_name(&self) -> String {
        match self.layout_basis {
            LayoutBasis::Android(rt) => self.layout.describe_android(rt),
            _ => self.layout.describe(),
        }
    }

    /// Total instances and bytes over all classes.
    pub fn total(&self) -> ClassTotals {
        sum(&self.totals)
    }

    /// Totals of one class (zero for classes without instances).
    pub fn of(&self, class: ClassIdx) -> ClassTotals {
        self.totals.get(class.index()).copied().unwrap_or_default()
    }
}

fn sum(totals: &[ClassTotals]) -> ClassTotals {
    totals.iter().fold(ClassTotals::default(), |a, t| ClassTotals {
        instances: a.instances + t.instances,
        shallow_bytes: a.shallow_bytes + t.shallow_bytes,
    })
}

/// Estimated size of a class mirror: `java.lang.Class`'s own size plus what it embeds.
pub(crate) fn mirror_bytes(class_bytes: u64, embedded_bytes: u64, layout: &VmLayout) -> u64 {
    layout.align_up(class_bytes + embedded_bytes)
}

/// Android: binds each overhead pseudo-array the heap pass set aside to the class whose
/// static field points at it, as that class's embedded bytes; an array no class claims is
/// counted as the ordinary array it then is. Names the runtime by the field's name.
fn claim_overhead(classes: &mut ClassTable, scan: &mut Scan) -> AndroidRuntime {
    let mut runtime = AndroidRuntime::Art;
    for o in std::mem::take(&mut scan.overhead) {
        let claimed = classes.by_id(o.class_id).and_then(|c| {
            let statics = &classes.get(c).statics;
            statics.iter().enumerate().find_map(|(i, s)| {
                let (_, rt) = OVERHEAD_STATICS.iter().find(|(name, _)| s.name == *name)?;
                (s.value == Value::Object(o.array_id)).then_some((c, i, *rt))
            })
        });
        match claimed {
            Some((c, i, rt)) => {
                runtime = rt;
                let class = classes.get_mut(c);
                class.embedded_bytes += u64::from(o.len) * u64::from(o.elem.primitive_bytes());
                class.overhead_static = u16::try_from(i).ok();
            }
            None => {
                for lens in [
                    scan.prim_arrays.entry(o.elem).or_default(),
                    scan.by_heap.entry((o.heap, RawKind::PrimArray(o.elem))).or_default(),
                ] {
                    *lens.entry(o.len).or_default() += 1;
                }
            }
        }
    }
    runtime
}

fn heap_name(ix: &DumpIndex<'_>, scan: &Scan, h: HeapId) -> String {
    h.and_then(|id| scan.heap_names.get(&id))
        .and_then(|&n| ix.string(n))
        .map_or_else(|| "default".to_owned(), |raw| String::from_utf8_lossy(raw).into_owned())
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

    /// [`Self::of_raw`] for an object whose class is known to be `class`: an instance or an
    /// object array of it (a primitive array's class comes from its element type).
    #[inline]
    pub(crate) fn of_class(&self, class: ClassIdx, raw: RawKind, length: u32) -> (ClassIdx, u64) {
        match raw {
            RawKind::Instance(_) => (class, self.census.classes.get(class).instance_bytes),
            RawKind::ObjArray(_) => (class, self.census.layout.array_bytes(BasicType::Object, u64::from(length))),
            RawKind::PrimArray(_) => self.of_raw(raw, length),
        }
    }

    /// The mirror of `class`.
    pub(crate) fn mirror(&self, class: ClassIdx) -> (ClassIdx, u64) {
        let base = self.class_class.map_or(0, |cc| self.census.classes.get(cc).instance_bytes);
        let embedded = self.census.classes.get(class).embedded_bytes;
        (self.class_class.unwrap_or(ClassIdx(0)), mirror_bytes(base, embedded, &self.census.layout))
    }

    /// The object a record describes (class 0 and no bytes for roots and dump info).
    pub(crate) fn of_record(&self, rec: &SubRecord<'_>) -> (ClassIdx, u64) {
        match rec {
            SubRecord::Instance { head, .. } => self.of_raw(RawKind::Instance(head.class_id), 0),
            SubRecord::ObjArray { head, .. } => self.of_raw(RawKind::ObjArray(head.class_id), head.length),
            SubRecord::PrimArray { head, elem, .. } => self.of_raw(RawKind::PrimArray(*elem), head.length),
            SubRecord::Class(d) => match self.census.classes.by_id(d.head.class_id) {
                Some(c) => self.mirror(c),
                None => (ClassIdx(0), 0),
            },
            SubRecord::Root(_) | SubRecord::HeapDumpInfo(_) => (ClassIdx(0), 0),
        }
    }
}
