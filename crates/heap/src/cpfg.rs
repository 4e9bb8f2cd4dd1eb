//! Cork's class points-from graph of one dump, read without building the object graph.
//!
//! Two passes over the objects: the first notes each object's class and size (8 bytes per
//! object, next to the address index every reference lookup needs), the second adds, for
//! every reference, the referent's size to the (referrer class → referent class) edge in
//! per-chunk maps merged at the end. No reference is stored.

use graph::{Packed40, Progress};
use hprof::SubRecord;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::census::{Census, ReadOptions};
use crate::classes::ClassIdx;
use crate::error::Error;
use crate::index::DumpIndex;
use crate::scan::Scan;
use crate::snapshot::{for_each_ref, is_referent_label, read_at, release_block, sort_objects, AddrIndex, Ctx, CHUNK};
use crate::source::Dump;
use crate::{EdgeLabel, RefStrength};

/// What holds a reference in the class points-from graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Referrer {
    /// Instances of a class (arrays included).
    Instances(ClassIdx),
    /// The static fields of a class.
    Statics(ClassIdx),
}

/// Referent bytes over one (referrer → referent class) edge, counted once per reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassEdge {
    /// Who holds the references.
    pub from: Referrer,
    /// The referents' class.
    pub to: ClassIdx,
    /// Their shallow bytes, once per reference.
    pub bytes: u64,
    /// Number of references.
    pub references: u64,
}

/// The class points-from graph of a dump: nodes are the census's per-class totals (every
/// object in the dump, as `jcmd GC.class_histogram` counts them), edges every strong
/// reference. A Reference's referent is not an edge, nor are a class's superclass and loader.
#[derive(Debug)]
pub struct ClassGraph {
    /// Classes, layout and per-class totals.
    pub census: Census,
    /// Edges, sorted by referrer then referent.
    pub edges: Vec<ClassEdge>,
}

type EdgeMap = FxHashMap<(Referrer, u32), (u64, u64)>;

impl ClassGraph {
    /// Reads the class points-from graph of `dump`.
    pub fn build(dump: &Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<ClassGraph, Error> {
        let data = dump.data();
        let ix = DumpIndex::build(data)?;
        let scan = Scan::run(dump, &ix, true, progress);
        let (mut census, mut scan) = Census::from_scan(&ix, scan, opts, data.len() as u64)?;
        let (addrs, offsets) = sort_objects(&mut census, std::mem::take(&mut scan.objects));
        drop(scan);
        let index = AddrIndex::new(&addrs);
        let ctx = Ctx::new(data, &census, &addrs, &offsets, &index);
        let n = addrs.len();
        progress.start("reading objects", n as u64);
        let mut kind = vec![0u64; n];
        kind.par_chunks_mut(CHUNK).enumerate().for_each(|(k, out)| {
            for (i, slot) in out.iter_mut().enumerate() {
                if let Some(rec) = read_at(data, offsets.get(k * CHUNK + i), ctx.id_size) {
                    let (c, bytes) = ctx.class_and_size(&rec);
                    *slot = u64::from(c.0) << 32 | (bytes / 8).min(u64::from(u32::MAX));
                }
            }
            release_block(dump, &offsets, k * CHUNK..k * CHUNK + out.len());
            progress.advance(out.len() as u64);
        });
        progress.finish();
        progress.start("summing references by class", n as u64);
        let merged = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .fold(EdgeMap::default, |mut acc, k| {
                let range = k * CHUNK..((k + 1) * CHUNK).min(n);
                add_edges(&ctx, &offsets, &kind, range.clone(), &mut acc);
                release_block(dump, &offsets, range.clone());
                progress.advance(range.len() as u64);
                acc
            })
            .reduce(EdgeMap::default, merge);
        progress.finish();
        let mut edges: Vec<ClassEdge> = merged
            .into_iter()
            .map(|((from, to), (bytes, references))| ClassEdge { from, to: ClassIdx(to), bytes, references })
            .collect();
        edges.sort_unstable_by_key(|e| (e.from, e.to));
        Ok(ClassGraph { census, edges })
    }
}

fn merge(mut a: EdgeMap, b: EdgeMap) -> EdgeMap {
    if a.len() < b.len() {
        return merge(b, a);
    }
    for (k, (bytes, refs)) in b {
        let e = a.entry(k).or_default();
        e.0 += bytes;
        e.1 += refs;
    }
    a
}

/// Adds the strong references of the objects in `range` to `acc`.
fn add_edges(ctx: &Ctx<'_>, offsets: &Packed40, kind: &[u64], range: std::ops::Range<usize>, acc: &mut EdgeMap) {
    let classes = &ctx.census.classes;
    for o in range {
        let Some(rec) = read_at(ctx.data, offsets.get(o), ctx.id_size) else { continue };
        let class = ClassIdx((kind[o] >> 32) as u32);
        let from = match &rec {
            SubRecord::Class(d) => match classes.by_id(d.head.class_id) {
                Some(c) => Referrer::Statics(c),
                None => continue,
            },
            _ => Referrer::Instances(class),
        };
        let weak = classes.get(class).ref_strength != RefStrength::Strong;
        for_each_ref(&rec, classes, ctx.id_size, |label, id| {
            if matches!(label, EdgeLabel::Super | EdgeLabel::Loader) || weak && is_referent_label(classes, class, label)
            {
                return;
            }
            if let Some(t) = ctx.index.find(|i| ctx.addrs[i], id) {
                let e = acc.entry((from, (kind[t] >> 32) as u32)).or_default();
                e.0 += (kind[t] & u64::from(u32::MAX)) * 8;
                e.1 += 1;
            }
        });
    }
}
