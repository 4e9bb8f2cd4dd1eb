//! How the JVM lays out objects, and inferring it from the dump.
//!
//! A dump writes every reference as an 8-byte id and says nothing about compressed oops,
//! compressed class pointers or object alignment, yet the JVM's own sizes depend on all
//! three. Object ids are addresses, and after the full GC that precedes a live dump, objects
//! are mostly packed, so the gap from one object to the next is its true size. Arrays have
//! no hidden fields, so their gaps choose the layout: each candidate layout predicts every
//! sampled array's size, a prediction equal to the gap scores, one larger than the gap (two
//! objects overlapping) disqualifies. Instances then get their size from the field list,
//! corrected by their smallest observed gap (the VM injects fields the dump does not list,
//! such as `MemberName.vmindex`).
//!
//! Two kinds of dump give no usable gaps. The old `-agentlib:hprof` agent numbers objects
//! (0x50000142, 0x50000143, ...), so gaps of one byte say nothing: sizes then follow HotSpot's
//! rules for the id size. Android's dumps declare each class's instance size, and the runtime
//! (Dalvik or ART) has one layout, which is used as it is.

use hprof::BasicType;

/// The object layout parameters of one JVM configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmLayout {
    /// Object header: mark word plus class pointer.
    pub header_bytes: u32,
    /// Size of a reference field or array element.
    pub ref_bytes: u32,
    /// Offset of the first element of arrays whose elements are smaller than 8 bytes.
    pub array_base_small: u32,
    /// Offset of the first element of arrays of 8-byte elements.
    pub array_base_large: u32,
    /// Object alignment (`-XX:ObjectAlignmentInBytes`).
    pub align: u32,
}

/// A user's override of some layout parameters; unset ones are inferred.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayoutSpec {
    /// `-XX:±UseCompressedOops`.
    pub compressed_oops: Option<bool>,
    /// `-XX:±UseCompressedClassPointers`.
    pub compressed_class_pointers: Option<bool>,
    /// `-XX:+UseCompactObjectHeaders` (JDK 24+).
    pub compact_headers: Option<bool>,
    /// `-XX:ObjectAlignmentInBytes`.
    pub align: Option<u32>,
}

/// One candidate family: (compressed oops, compressed class pointers, compact headers, layout without alignment).
const FAMILIES: [(bool, bool, bool, u32, u32, u32, u32); 6] = [
    // coops, ccp, compact, header, ref, base<8, base8
    (true, true, false, 12, 4, 16, 16),
    (false, true, false, 12, 8, 16, 16),
    (false, false, false, 16, 8, 24, 24),
    (false, false, false, 16, 8, 20, 24), // JDK 22+: element base no longer 8-aligned
    (true, false, false, 16, 4, 24, 24),
    (true, true, true, 8, 4, 12, 16), // compact headers (JDK 24+), and 32-bit VMs
];

impl VmLayout {
    /// HotSpot's default on 64 bits below 32 GB of heap: compressed oops and class pointers, 8-byte alignment.
    pub const DEFAULT_64: VmLayout = VmLayout::of(FAMILIES[0], 8);
    /// A 32-bit VM: 8-byte header, 4-byte references.
    pub const DEFAULT_32: VmLayout = VmLayout::of(FAMILIES[5], 8);
    /// Android's ART: 8-byte header (class and monitor words), 4-byte references, array
    /// elements from offset 12 (16 for 8-byte elements), 8-byte alignment.
    pub const ART: VmLayout = VmLayout::of(FAMILIES[5], 8);
    /// Android's Dalvik: as ART, but array elements always start at offset 16.
    pub const DALVIK: VmLayout =
        VmLayout { header_bytes: 8, ref_bytes: 4, array_base_small: 16, array_base_large: 16, align: 8 };

    const fn of(f: (bool, bool, bool, u32, u32, u32, u32), align: u32) -> VmLayout {
        VmLayout { header_bytes: f.3, ref_bytes: f.4, array_base_small: f.5, array_base_large: f.6, align }
    }

    /// Size in the JVM of a value of type `t`.
    pub fn value_bytes(&self, t: BasicType) -> u32 {
        match t {
            BasicType::Object => self.ref_bytes,
            p => p.primitive_bytes(),
        }
    }

    /// Size of an array of `len` elements of type `t`.
    pub fn array_bytes(&self, t: BasicType, len: u64) -> u64 {
        let elem = u64::from(self.value_bytes(t));
        let base = if elem >= 8 { self.array_base_large } else { self.array_base_small };
        self.align_up(u64::from(base) + elem * len)
    }

    /// Size of an instance whose fields (all of its class chain) add up to `field_bytes`.
    pub fn instance_bytes(&self, field_bytes: u64) -> u64 {
        self.align_up(u64::from(self.header_bytes) + field_bytes)
    }

    /// Rounds up to the object alignment.
    pub fn align_up(&self, n: u64) -> u64 {
        let a = u64::from(self.align.max(8));
        n.div_ceil(a) * a
    }

    /// A short description, such as `compressed oops, compressed class pointers, 8-byte alignment`.
    pub fn describe(&self) -> String {
        let oops = if self.ref_bytes == 4 { "compressed oops" } else { "uncompressed oops" };
        let header = match self.header_bytes {
            8 => "8-byte headers (compact headers or 32-bit VM)",
            12 => "compressed class pointers",
            _ => "uncompressed class pointers",
        };
        format!("{oops}, {header}, {}-byte alignment", self.align)
    }

    /// The layout in an Android runtime's terms.
    pub fn describe_android(&self, runtime: AndroidRuntime) -> String {
        let name = match runtime {
            AndroidRuntime::Dalvik => "Android Dalvik",
            AndroidRuntime::Art => "Android ART",
        };
        let arrays = if self.array_base_small == self.array_base_large {
            format!("array data at offset {}", self.array_base_small)
        } else {
            format!("array data at offset {} ({} for 8-byte elements)", self.array_base_small, self.array_base_large)
        };
        format!(
            "{name}: {}-byte object headers, {}-byte references, {arrays}, {}-byte alignment",
            self.header_bytes, self.ref_bytes, self.align
        )
    }
}

/// The Android runtime that wrote a dump, told apart by the static field that stands for the
/// storage a class object embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AndroidRuntime {
    /// `$staticOverhead` (Android 4 and older).
    Dalvik,
    /// `$classOverhead` (Android 5 and later), or no such field at all.
    Art,
}

/// Why the layout is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutBasis {
    /// The gaps between arrays' addresses: this many arrays' sizes matched them exactly.
    Gaps {
        /// Arrays whose predicted size equals the gap to the next object.
        agreeing: u64,
    },
    /// No gap matched any candidate: HotSpot's default for the id size.
    NoEvidence,
    /// Object ids are sequence numbers, not addresses (the old hprof agent, whose 4-byte ids
    /// say nothing of the VM either): 64-bit HotSpot's default, each instance sized from its
    /// fields.
    SequenceIds,
    /// An Android dump: the runtime's layout, instance sizes as the dump declares them.
    Android(AndroidRuntime),
}

impl LayoutBasis {
    /// Why, in a few words, for `info` and `histogram`.
    pub fn describe(&self) -> String {
        match self {
            LayoutBasis::Gaps { agreeing } => format!("inferred from {agreeing} arrays' address gaps"),
            LayoutBasis::NoEvidence => "assumed: no array's address gap matched a known layout".into(),
            LayoutBasis::SequenceIds => {
                "assumed (64-bit HotSpot's default): object ids are sequence numbers, not addresses, so sizes \
                 come from each class's fields"
                    .into()
            }
            LayoutBasis::Android(_) => "instance sizes as the dump declares them, rounded to the alignment".into(),
        }
    }
}

/// Evidence for layout inference: an array and the gap from its address to the next object's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayGap {
    /// Element type.
    pub elem: BasicType,
    /// Number of elements.
    pub len: u32,
    /// Address difference to the next object in the dump.
    pub gap: u64,
}

/// Chooses the layout that best explains the array gaps, within what `spec` fixes, and says
/// how many arrays agreed. With no usable evidence it falls back to HotSpot's default for the
/// identifier size.
pub fn infer(evidence: &[ArrayGap], spec: LayoutSpec, id_size: hprof::IdSize) -> (VmLayout, LayoutBasis) {
    let candidates: Vec<VmLayout> = FAMILIES
        .iter()
        .filter(|f| spec.compressed_oops.is_none_or(|c| c == f.0))
        .filter(|f| spec.compressed_class_pointers.is_none_or(|c| c == f.1))
        .filter(|f| spec.compact_headers.is_none_or(|c| c == f.2))
        .flat_map(|f| {
            let aligns: &[u32] = match spec.align {
                Some(ref a) => std::slice::from_ref(a),
                None => &[8, 16, 32, 64],
            };
            aligns.iter().map(move |&a| VmLayout::of(*f, a))
        })
        .collect();
    // Scored once per distinct array shape and gap, weighted by how often it was seen: a
    // dump of 1,600 segments keeps 800,000 gaps, most of them repeats, and scoring each for
    // every candidate layout took 60 ms of the histogram's one thread.
    let mut seen: rustc_hash::FxHashMap<ArrayGap, i64> = rustc_hash::FxHashMap::default();
    for e in evidence {
        *seen.entry(*e).or_default() += 1;
    }
    let distinct: Vec<(ArrayGap, i64)> = seen.into_iter().collect();
    let mut best: Option<(i64, VmLayout)> = None;
    for cand in &candidates {
        let score = score(cand, &distinct);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, *cand));
        }
    }
    match best {
        Some((score, layout)) if score > 0 => {
            let agreeing =
                evidence.iter().filter(|e| layout.array_bytes(e.elem, u64::from(e.len)) == e.gap).count() as u64;
            (layout, LayoutBasis::Gaps { agreeing })
        }
        _ => {
            let fallback = match id_size {
                hprof::IdSize::Four => VmLayout::DEFAULT_32,
                hprof::IdSize::Eight => VmLayout::DEFAULT_64,
            };
            (assumed(spec, fallback), LayoutBasis::NoEvidence)
        }
    }
}

/// `fallback`, changed as far as `spec` fixes otherwise: for dumps whose ids say nothing
/// about sizes.
pub fn assumed(spec: LayoutSpec, fallback: VmLayout) -> VmLayout {
    let fits = |f: &&(bool, bool, bool, u32, u32, u32, u32)| {
        spec.compressed_oops.is_none_or(|c| c == f.0)
            && spec.compressed_class_pointers.is_none_or(|c| c == f.1)
            && spec.compact_headers.is_none_or(|c| c == f.2)
    };
    let align = spec.align.unwrap_or(fallback.align);
    match FAMILIES.iter().find(|f| fits(f) && VmLayout::of(**f, fallback.align) == fallback) {
        Some(f) => VmLayout::of(*f, align),
        None => FAMILIES.iter().find(fits).map_or(fallback, |f| VmLayout::of(*f, align)),
    }
}

fn score(layout: &VmLayout, evidence: &[(ArrayGap, i64)]) -> i64 {
    evidence.iter().fold(0i64, |acc, (e, n)| {
        let predicted = layout.array_bytes(e.elem, u64::from(e.len));
        acc + n * match predicted.cmp(&e.gap) {
            std::cmp::Ordering::Equal => 1,
            std::cmp::Ordering::Greater => -8,
            std::cmp::Ordering::Less => 0,
        }
    })
}

/// Bytes of padding HotSpot puts around `@Contended` fields (`-XX:ContendedPaddingWidth`).
pub const CONTENDED_PADDING_BYTES: u64 = 128;

/// What the gaps after a class's instances show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GapEvidence {
    /// The smallest gap from one of its instances to the next object.
    pub min_gap: u64,
    /// How many instances showed exactly that gap.
    pub at_min: u64,
}

/// The instance size of a class from its field model, corrected by the smallest gap observed
/// after one of its instances: objects never overlap, so the gap bounds the size from above.
/// A gap a little above the model reveals fields the VM injected (up to 32 bytes, such as
/// `MemberName.vmindex`); a gap 256 to 512 bytes above it reveals `@Contended` padding (128
/// bytes before and after each group, as in `java.lang.Thread`), believed when two instances
/// show it or when an ancestor is padded too. Any other excess is free space after the object.
pub fn corrected_instance_bytes(
    model: u64,
    ev: Option<GapEvidence>,
    ancestor_padded: bool,
    layout: &VmLayout,
) -> Option<u64> {
    const MAX_INJECTED_BYTES: u64 = 32;
    let ev = ev
        .filter(|e| e.min_gap.is_multiple_of(u64::from(layout.align)) && e.min_gap >= u64::from(layout.header_bytes))?;
    let g = ev.min_gap;
    if g <= model + MAX_INJECTED_BYTES {
        return Some(g);
    }
    let extra = g - model;
    let padded = (2..=4)
        .any(|k| (k * CONTENDED_PADDING_BYTES..=k * CONTENDED_PADDING_BYTES + MAX_INJECTED_BYTES).contains(&extra));
    (padded && (ev.at_min >= 2 || ancestor_padded)).then_some(g)
}

/// True when a size correction is big enough to be `@Contended` padding.
pub fn is_padding(delta: i64) -> bool {
    delta >= 2 * CONTENDED_PADDING_BYTES as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_match_hotspot() {
        let l = VmLayout::DEFAULT_64;
        assert_eq!(l.array_bytes(BasicType::Object, 3), 32);
        assert_eq!(l.array_bytes(BasicType::Byte, 0), 16);
        assert_eq!(l.array_bytes(BasicType::Long, 1), 24);
        assert_eq!(l.instance_bytes(12), 24); // String: int hash, byte coder, bool, ref value
    }

    #[test]
    fn infers_uncompressed_oops_from_gaps() {
        let truth = VmLayout::of(FAMILIES[2], 8);
        let ev: Vec<ArrayGap> = (0..40)
            .map(|i| ArrayGap { elem: BasicType::Object, len: i, gap: truth.array_bytes(BasicType::Object, i as u64) })
            .chain((0..40).map(|i| ArrayGap {
                elem: BasicType::Int,
                len: i,
                gap: truth.array_bytes(BasicType::Int, i as u64),
            }))
            .collect();
        assert_eq!(infer(&ev, LayoutSpec::default(), hprof::IdSize::Eight).0, truth);
        let forced = LayoutSpec { compressed_oops: Some(true), ..Default::default() };
        assert_eq!(infer(&ev, forced, hprof::IdSize::Eight).0.ref_bytes, 4);
    }

    #[test]
    fn infers_alignment_16() {
        let truth = VmLayout::of(FAMILIES[0], 16);
        let ev: Vec<ArrayGap> = (0..30)
            .map(|i| ArrayGap { elem: BasicType::Byte, len: i, gap: truth.array_bytes(BasicType::Byte, i as u64) })
            .collect();
        assert_eq!(infer(&ev, LayoutSpec::default(), hprof::IdSize::Eight).0, truth);
    }

    #[test]
    fn no_evidence_means_default() {
        assert_eq!(
            infer(&[], LayoutSpec::default(), hprof::IdSize::Eight),
            (VmLayout::DEFAULT_64, LayoutBasis::NoEvidence)
        );
        assert_eq!(
            infer(&[], LayoutSpec::default(), hprof::IdSize::Four),
            (VmLayout::DEFAULT_32, LayoutBasis::NoEvidence)
        );
        let uncompressed = LayoutSpec { compressed_oops: Some(false), ..Default::default() };
        assert_eq!(assumed(uncompressed, VmLayout::DEFAULT_64).ref_bytes, 8);
        assert_eq!(assumed(LayoutSpec { align: Some(16), ..Default::default() }, VmLayout::DEFAULT_32).align, 16);
        assert_eq!(assumed(LayoutSpec::default(), VmLayout::DEFAULT_64), VmLayout::DEFAULT_64);
    }

    #[test]
    fn gap_correction() {
        let l = VmLayout::DEFAULT_64;
        let ev = |min_gap, at_min| Some(GapEvidence { min_gap, at_min });
        assert_eq!(corrected_instance_bytes(40, ev(48, 1), false, &l), Some(48)); // injected field
        assert_eq!(corrected_instance_bytes(112, ev(368, 9), false, &l), Some(368)); // @Contended padding
        assert_eq!(corrected_instance_bytes(112, ev(376, 1), true, &l), Some(376)); // padded subclass
        assert_eq!(corrected_instance_bytes(112, ev(376, 1), false, &l), None); // one instance, no padded ancestor
        assert_eq!(corrected_instance_bytes(16, ev(144, 3), false, &l), None); // 128 bytes free: not padding
        assert_eq!(corrected_instance_bytes(40, ev(4096, 1), false, &l), None); // end of a region
        assert_eq!(corrected_instance_bytes(40, ev(32, 1), false, &l), Some(32)); // model too big
        assert_eq!(corrected_instance_bytes(40, None, false, &l), None);
    }
}
