//! A series of summaries aligned by class name: objects move between heaps, classes do not.

use rustc_hash::FxHashMap;

use crate::summary::HeapSummary;

/// One class across the series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSeries {
    /// Class name.
    pub name: String,
    /// Bytes per heap (0 where absent).
    pub bytes: Vec<u64>,
    /// Instances per heap.
    pub instances: Vec<u64>,
}

/// One referrer → referent edge across the series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeSeries {
    /// Referrer.
    pub from: String,
    /// Referent class.
    pub to: String,
    /// Referent bytes per heap (0 where absent).
    pub bytes: Vec<u64>,
}

/// Class and edge volumes of several heaps, in time order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Total bytes per heap.
    pub totals: Vec<u64>,
    /// Each heap's place in time when they were taken at uneven times ([`crate::ranking::positions`]).
    pub at: Option<Vec<f64>>,
    /// Classes, in order of first appearance.
    pub classes: Vec<ClassSeries>,
    /// Edges, in order of first appearance.
    pub edges: Vec<EdgeSeries>,
}

impl Series {
    /// Aligns `summaries` (oldest first). Classes of the same name from different loaders are
    /// added together: the series cannot tell them apart from one heap to the next.
    pub fn new(summaries: &[HeapSummary]) -> Series {
        let n = summaries.len();
        let times: Vec<Option<u64>> = summaries.iter().map(|h| h.time_ms).collect();
        let mut s = Series {
            totals: summaries.iter().map(|h| h.total_bytes).collect(),
            at: crate::ranking::positions(&times),
            ..Default::default()
        };
        let mut class_at: FxHashMap<&str, usize> = FxHashMap::default();
        let mut edge_at: FxHashMap<(&str, &str), usize> = FxHashMap::default();
        for (i, h) in summaries.iter().enumerate() {
            for c in &h.classes {
                let k = *class_at.entry(&c.name).or_insert_with(|| {
                    s.classes.push(ClassSeries { name: c.name.clone(), bytes: vec![0; n], instances: vec![0; n] });
                    s.classes.len() - 1
                });
                s.classes[k].bytes[i] += c.bytes;
                s.classes[k].instances[i] += c.instances;
            }
            for e in &h.edges {
                let k = *edge_at.entry((&e.from, &e.to)).or_insert_with(|| {
                    s.edges.push(EdgeSeries { from: e.from.clone(), to: e.to.clone(), bytes: vec![0; n] });
                    s.edges.len() - 1
                });
                s.edges[k].bytes[i] += e.bytes;
            }
        }
        s
    }

    /// Number of heaps.
    pub fn len(&self) -> usize {
        self.totals.len()
    }

    /// Whether there is no heap at all.
    pub fn is_empty(&self) -> bool {
        self.totals.is_empty()
    }
}
