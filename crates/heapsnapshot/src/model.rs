//! The heap a snapshot describes, in columns: per node its type, name, id, size and edges;
//! per edge its type, name and target. Strings stay in the file until asked for.

use std::borrow::Cow;

use graph::{Csr, Graph, Ints};

use crate::json;
use crate::meta::{EdgeType, Layout, NodeType};

/// A node of the snapshot, by its position in `nodes` (0 is V8's synthetic root).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIdx(pub u32);

impl NodeIdx {
    /// The position as an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One reference from a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// What kind of reference it is.
    pub kind: EdgeType,
    /// For elements and hidden edges the index; for the others the name's string index.
    pub name_or_index: u32,
    /// The node referred to.
    pub to: NodeIdx,
}

/// Named properties beyond which an object is a dictionary: its keys are data, not places (V8
/// itself leaves fast properties for a dictionary at about 128).
pub const DICTIONARY: usize = 128;

/// A V8 heap snapshot, read.
pub struct V8Heap {
    pub(crate) bytes: Box<dyn crate::bytes::SnapshotBytes>,
    pub(crate) layout: Layout,
    pub(crate) node_type: Vec<u8>,
    pub(crate) node_name: Ints,
    pub(crate) node_id: Ints,
    /// Each node's self size; `u32::MAX` means it is in `big_sizes`.
    pub(crate) node_size: Ints,
    /// Nodes of 4 GiB and more (ArrayBuffer backing stores), with their sizes, by node.
    pub(crate) big_sizes: Vec<(u32, u64)>,
    pub(crate) detachedness: Option<Vec<u8>>,
    pub(crate) trace_node: Option<Vec<u32>>,
    pub(crate) edges: Csr,
    pub(crate) edge_type: Vec<u8>,
    pub(crate) edge_name: Ints,
    /// Where each string's contents start in the file, and their length.
    pub(crate) strings: Vec<(u64, u32)>,
    /// The allocation traces, when allocations were tracked.
    pub(crate) traces: Option<crate::trace::Traces>,
}

impl std::fmt::Debug for V8Heap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("V8Heap")
            .field("nodes", &self.node_count())
            .field("edges", &self.edge_count())
            .field("strings", &self.strings.len())
            .finish()
    }
}

impl V8Heap {
    /// Number of nodes (objects, and the profiler's synthetic nodes).
    pub fn node_count(&self) -> usize {
        self.node_type.len()
    }

    /// Number of edges, weak ones included.
    pub fn edge_count(&self) -> usize {
        self.edge_type.len()
    }

    /// Every node, in the snapshot's order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeIdx> + '_ {
        (0..self.node_count() as u32).map(NodeIdx)
    }

    /// The node's type.
    pub fn node_type(&self, n: NodeIdx) -> NodeType {
        self.layout
            .node_types
            .get(usize::from(self.node_type[n.index()]))
            .copied()
            .unwrap_or(NodeType::Other(self.node_type[n.index()]))
    }

    /// The node's name: an object's constructor, a function's name, a string's text (cut by
    /// V8 at 1,024 characters), a synthetic node's label.
    pub fn name(&self, n: NodeIdx) -> String {
        self.string(self.name_index(n))
    }

    /// The node's name's string index, for grouping without decoding.
    pub fn name_index(&self, n: NodeIdx) -> u32 {
        self.node_name.get(n.index()) as u32
    }

    /// V8's id of the object, stable across snapshots of one process (DevTools' `@id`).
    pub fn id(&self, n: NodeIdx) -> u64 {
        self.node_id.get(n.index())
    }

    /// Bytes of the object itself.
    pub fn self_size(&self, n: NodeIdx) -> u64 {
        match self.node_size.get(n.index()) as u32 {
            u32::MAX => {
                let at = self.big_sizes.partition_point(|b| b.0 < n.0);
                self.big_sizes.get(at).filter(|b| b.0 == n.0).map_or(0, |b| b.1)
            }
            s => u64::from(s),
        }
    }

    /// V8's detachedness of an embedder node (0 unknown, 1 attached, 2 detached), when the
    /// snapshot records it.
    pub fn detachedness(&self, n: NodeIdx) -> Option<u8> {
        self.detachedness.as_ref().map(|d| d[n.index()])
    }

    /// The allocation trace node of the object, when allocations were tracked (0: none).
    pub fn trace_node(&self, n: NodeIdx) -> Option<u32> {
        self.trace_node.as_ref().map(|t| t[n.index()])
    }

    /// The stack that allocated the node, innermost frame first, when allocations were tracked
    /// and the node was allocated after tracking began.
    pub fn allocation_stack(&self, n: NodeIdx) -> Option<Vec<crate::Frame>> {
        let id = self.trace_node(n).filter(|&t| t != 0)?;
        let stack = self.traces.as_ref()?.stack(id, |s| self.string(s));
        (!stack.is_empty()).then_some(stack)
    }

    /// Objects and bytes the node's allocation site allocated since tracking began (live or
    /// not), as DevTools' allocation view counts them.
    pub fn allocated_at_site(&self, n: NodeIdx) -> Option<(u32, u64)> {
        self.traces.as_ref()?.allocated(self.trace_node(n).filter(|&t| t != 0)?)
    }

    /// True when the snapshot says which nodes are detached from the DOM (a `detachedness`
    /// field: Chrome's and recent Node.js's).
    pub fn has_detachedness(&self) -> bool {
        self.detachedness.is_some()
    }

    /// True when the snapshot records allocation sites.
    pub fn has_allocation_sites(&self) -> bool {
        self.traces.is_some()
    }

    /// The node's edges, in the snapshot's order.
    pub fn edges(&self, n: NodeIdx) -> impl Iterator<Item = Edge> + '_ {
        self.edges.edge_range(n.index()).map(|e| self.edge(e))
    }

    fn edge(&self, e: usize) -> Edge {
        Edge {
            kind: self.edge_kind(e),
            name_or_index: self.edge_name.get(e) as u32,
            to: NodeIdx(self.edges.target(e) as u32),
        }
    }

    fn edge_kind(&self, e: usize) -> EdgeType {
        let t = self.edge_type[e];
        self.layout.edge_types.get(usize::from(t)).copied().unwrap_or(EdgeType::Other(t))
    }

    /// How DevTools labels an edge: a property's name, `[3]` for an element, a context
    /// variable's name, and so on.
    pub fn edge_label(&self, e: &Edge) -> String {
        if e.kind.is_numbered() {
            format!("[{}]", e.name_or_index)
        } else {
            self.string(e.name_or_index)
        }
    }

    /// The index of the string `s` in the snapshot's table (its first, if written twice): a
    /// scan of the table, for looking a name up once instead of decoding every edge's.
    pub fn string_index(&self, s: &str) -> Option<u32> {
        let bytes = self.bytes.as_ref().as_ref();
        (0..self.strings.len() as u32).find(|&i| {
            let (start, len) = self.strings[i as usize];
            let raw = &bytes[start as usize..start as usize + len as usize];
            // Names without escapes compare as written; the rest decoded.
            if raw.contains(&b'\\') {
                json::decode(raw) == s
            } else {
                raw == s.as_bytes()
            }
        })
    }

    /// True when `n` has more than [`DICTIONARY`] named properties: an object used as a
    /// dictionary, whose property names are keys (data), not places.
    pub fn is_dictionary(&self, n: NodeIdx) -> bool {
        self.edges(n).filter(|e| e.kind == EdgeType::Property).nth(DICTIONARY).is_some()
    }

    /// Per string of the table, whether it is only a value: the text of a string node or a
    /// dictionary's key, and no other node's name nor another named edge's (a property's, a
    /// variable's), which analyses show.
    pub fn value_strings(&self) -> Vec<bool> {
        let (mut value, mut name) = (vec![false; self.strings.len()], vec![false; self.strings.len()]);
        for n in self.nodes() {
            let s = self.name_index(n) as usize;
            if let Some(slot) = if self.node_type(n).is_string() { value.get_mut(s) } else { name.get_mut(s) } {
                *slot = true;
            }
        }
        for n in self.nodes() {
            let dictionary = self.is_dictionary(n);
            for e in self.edges(n).filter(|e| !e.kind.is_numbered()) {
                let keyed = dictionary && e.kind == EdgeType::Property;
                if let Some(slot) =
                    if keyed { value.get_mut(e.name_or_index as usize) } else { name.get_mut(e.name_or_index as usize) }
                {
                    *slot = true;
                }
            }
        }
        value.iter().zip(&name).map(|(&v, &n)| v && !n).collect()
    }

    /// Writes the snapshot's file again to `out`, with the contents of each string for which
    /// `replace` (given its index and its text) returns UTF-16 units replaced by those units;
    /// everything else is copied byte for byte. Returns the bytes written.
    pub fn write_replacing_strings(
        &self,
        out: &mut dyn std::io::Write,
        mut replace: impl FnMut(u32, &str) -> Option<Vec<u16>>,
    ) -> std::io::Result<u64> {
        let bytes = self.bytes.as_ref().as_ref();
        let mut at = 0usize;
        let mut written = 0u64;
        for (i, &(start, len)) in self.strings.iter().enumerate() {
            let (start, end) = (start as usize, start as usize + len as usize);
            let Some(units) = replace(i as u32, &json::decode(&bytes[start..end])) else { continue };
            out.write_all(&bytes[at..start])?;
            let escaped = json::encode_units(&units);
            out.write_all(escaped.as_bytes())?;
            written += (start - at + escaped.len()) as u64;
            at = end;
        }
        out.write_all(&bytes[at..])?;
        Ok(written + (bytes.len() - at) as u64)
    }

    /// String number `i` of the snapshot's table, decoded.
    pub fn string(&self, i: u32) -> String {
        match self.strings.get(i as usize) {
            Some(&(start, len)) => {
                let bytes = self.bytes.as_ref().as_ref();
                json::decode(&bytes[start as usize..start as usize + len as usize])
            }
            None => String::new(),
        }
    }

    /// The group DevTools' Summary puts the node in: an object's or a native's name (its
    /// constructor), `(system)` for V8's hidden objects, `(compiled code)`, and the type in
    /// brackets for the rest (`(string)`, `(array)`, `(closure)`, `(number)`, ...).
    pub fn class_name(&self, n: NodeIdx) -> Cow<'static, str> {
        match self.node_type(n) {
            NodeType::Object | NodeType::Native => Cow::Owned(self.name(n)),
            other => Cow::Borrowed(type_group(other)),
        }
    }

    /// The group key of [`Self::class_name`] without decoding a name: the name's string index
    /// for objects and natives, else the type's group.
    pub fn class_key(&self, n: NodeIdx) -> ClassKey {
        match self.node_type(n) {
            NodeType::Object | NodeType::Native => ClassKey::Named(self.name_index(n)),
            other => ClassKey::Type(type_group(other)),
        }
    }

    /// True when the edge keeps its target alive: every edge but weak ones, and shortcuts only
    /// from the root (as DevTools computes retained sizes).
    pub fn retains(&self, from: NodeIdx, e: &Edge) -> bool {
        retains(from, e.kind)
    }

    /// Bytes this index takes in memory (the file's pages not counted).
    pub fn heap_bytes(&self) -> usize {
        self.node_type.capacity()
            + self.node_name.heap_bytes()
            + self.node_id.heap_bytes()
            + self.node_size.heap_bytes()
            + self.detachedness.as_ref().map_or(0, Vec::capacity)
            + 4 * self.trace_node.as_ref().map_or(0, Vec::capacity)
            + self.edges.heap_bytes()
            + self.edge_type.capacity()
            + self.edge_name.heap_bytes()
            + 12 * self.strings.capacity()
    }
}

/// True when an edge of `kind` from `from` keeps its target alive ([`V8Heap::retains`]).
fn retains(from: NodeIdx, kind: EdgeType) -> bool {
    match kind {
        EdgeType::Weak => false,
        EdgeType::Shortcut => from.0 == 0,
        _ => true,
    }
}

/// How nodes group by constructor, cheaply comparable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClassKey {
    /// Objects and natives, by the string index of their name.
    Named(u32),
    /// The rest, by their type's group.
    Type(&'static str),
}

fn type_group(t: NodeType) -> &'static str {
    match t {
        NodeType::Hidden => "(system)",
        NodeType::Code => "(compiled code)",
        NodeType::Array => "(array)",
        NodeType::String => "(string)",
        NodeType::Object => "(object)",
        NodeType::Closure => "(closure)",
        NodeType::Regexp => "(regexp)",
        NodeType::Number => "(number)",
        NodeType::Native => "(native)",
        NodeType::Synthetic => "(synthetic)",
        NodeType::ConcatenatedString => "(concatenated string)",
        NodeType::SlicedString => "(sliced string)",
        NodeType::Symbol => "(symbol)",
        NodeType::Bigint => "(bigint)",
        NodeType::ObjectShape => "(object shape)",
        NodeType::WasmObject => "(wasm object)",
        NodeType::Other(_) => "(unknown type)",
    }
}

/// The references that keep objects alive, from the root (node 0).
impl Graph for V8Heap {
    fn node_count(&self) -> usize {
        self.node_count()
    }

    /// The names, ids, sizes and edges wait in their files while the dominator tree's phases
    /// run: the search reads the edges' types and targets alone (and faults them back in), the
    /// phases after it none of these.
    fn release(&self) {
        for column in [&self.node_name, &self.node_id, &self.node_size, &self.edge_name] {
            column.release();
        }
        self.edges.release();
    }

    /// Reads the edges' types and targets, not their names: the search faulted the names'
    /// file in too (348 MB of a 2.15 GB snapshot's peak) for nothing.
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize)) {
        let from = NodeIdx(node as u32);
        for e in self.edges.edge_range(node) {
            if retains(from, self.edge_kind(e)) {
                f(self.edges.target(e) as usize);
            }
        }
    }
}
