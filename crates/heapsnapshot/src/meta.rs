//! `snapshot.meta`: where each field sits in the flat arrays, and the names of the node and
//! edge types, which the reader maps to [`NodeType`] and [`EdgeType`] by name (not by position:
//! V8 has added types over the years, and may again).

use serde::Deserialize;

use crate::Error;

/// What a node is, as V8's heap profiler classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeType {
    /// V8's internal objects (DevTools: "(system)").
    Hidden,
    /// An internal array (DevTools: "(array)").
    Array,
    /// A flat string.
    String,
    /// A JavaScript object; its name is its constructor's.
    Object,
    /// Compiled code.
    Code,
    /// A function (a closure); its name is the function's.
    Closure,
    /// A regular expression.
    Regexp,
    /// A heap number.
    Number,
    /// An object of the embedder (DOM nodes in Chrome, native wrappers in Node.js).
    Native,
    /// A node the profiler adds (the root, "(GC roots)" and its categories).
    Synthetic,
    /// A string made of two others, not yet flattened.
    ConcatenatedString,
    /// A string that is a slice of another.
    SlicedString,
    /// A symbol.
    Symbol,
    /// A BigInt.
    Bigint,
    /// A hidden class (map) of objects.
    ObjectShape,
    /// A WebAssembly object.
    WasmObject,
    /// A type this reader does not know, by its name's index in `meta`.
    Other(u8),
}

impl NodeType {
    fn from_name(name: &str, index: u8) -> NodeType {
        match name {
            "hidden" => NodeType::Hidden,
            "array" => NodeType::Array,
            "string" => NodeType::String,
            "object" => NodeType::Object,
            "code" => NodeType::Code,
            "closure" => NodeType::Closure,
            "regexp" => NodeType::Regexp,
            "number" => NodeType::Number,
            "native" => NodeType::Native,
            "synthetic" => NodeType::Synthetic,
            "concatenated string" => NodeType::ConcatenatedString,
            "sliced string" => NodeType::SlicedString,
            "symbol" => NodeType::Symbol,
            "bigint" => NodeType::Bigint,
            "object shape" => NodeType::ObjectShape,
            "wasm object" => NodeType::WasmObject,
            _ => NodeType::Other(index),
        }
    }

    /// True for the three kinds of string.
    pub fn is_string(self) -> bool {
        matches!(self, NodeType::String | NodeType::ConcatenatedString | NodeType::SlicedString)
    }
}

/// What a reference is, as V8's heap profiler classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeType {
    /// A variable of a closure's context; named.
    Context,
    /// An array element; numbered.
    Element,
    /// A named property.
    Property,
    /// A reference inside V8's own structures; named.
    Internal,
    /// A reference the profiler adds between objects; numbered.
    Hidden,
    /// A shortcut past an intermediate object (from the root to the global objects, say);
    /// named. It retains only from the root.
    Shortcut,
    /// A reference that does not keep its target alive.
    Weak,
    /// A type this reader does not know, by its name's index in `meta`.
    Other(u8),
}

impl EdgeType {
    fn from_name(name: &str, index: u8) -> EdgeType {
        match name {
            "context" => EdgeType::Context,
            "element" => EdgeType::Element,
            "property" => EdgeType::Property,
            "internal" => EdgeType::Internal,
            "hidden" => EdgeType::Hidden,
            "shortcut" => EdgeType::Shortcut,
            "weak" => EdgeType::Weak,
            _ => EdgeType::Other(index),
        }
    }

    /// True when the edge's name field is an index (elements and hidden edges), not a string.
    pub fn is_numbered(self) -> bool {
        matches!(self, EdgeType::Element | EdgeType::Hidden)
    }
}

/// `snapshot` as written: `meta` and the counts.
#[derive(Debug, Deserialize)]
pub(crate) struct SnapshotHead {
    pub meta: RawMeta,
    pub node_count: u64,
    pub edge_count: u64,
    #[serde(default)]
    pub trace_function_count: u64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct RawMeta {
    node_fields: Vec<String>,
    node_types: Vec<serde_json::Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<serde_json::Value>,
    #[serde(default)]
    trace_function_info_fields: Vec<String>,
    #[serde(default)]
    trace_node_fields: Vec<String>,
}

/// The positions of the fields this reader uses, and the type tables.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub node_width: usize,
    pub node_type: usize,
    pub node_name: usize,
    pub node_id: usize,
    pub node_size: usize,
    pub node_edges: usize,
    pub node_trace: Option<usize>,
    pub node_detachedness: Option<usize>,
    pub edge_width: usize,
    pub edge_type: usize,
    pub edge_name: usize,
    pub edge_to: usize,
    pub node_types: Vec<NodeType>,
    pub edge_types: Vec<EdgeType>,
    /// Where the allocation traces' fields sit, when the meta names them.
    pub trace: Option<crate::trace::TraceLayout>,
}

fn position(fields: &[String], name: &str, of: &str) -> Result<usize, Error> {
    fields
        .iter()
        .position(|f| f == name)
        .ok_or_else(|| Error::Meta(format!("{of} has no \"{name}\" (it lists {})", fields.join(", "))))
}

fn type_names(types: &[serde_json::Value], of: &str) -> Result<Vec<String>, Error> {
    let names = types
        .first()
        .and_then(|t| t.as_array())
        .ok_or_else(|| Error::Meta(format!("{of}'s first entry is not the list of type names")))?;
    if names.len() > usize::from(u8::MAX) + 1 {
        return Err(Error::Meta(format!("{of} names {} types, more than 256", names.len())));
    }
    names
        .iter()
        .map(|n| {
            n.as_str()
                .map(str::to_owned)
                .ok_or_else(|| Error::Meta(format!("{of} holds a type name that is not a string")))
        })
        .collect()
}

impl RawMeta {
    pub(crate) fn layout(&self) -> Result<Layout, Error> {
        let nf = &self.node_fields;
        let ef = &self.edge_fields;
        let node_type = position(nf, "type", "node_fields")?;
        let edge_type = position(ef, "type", "edge_fields")?;
        let node_types = type_names(&self.node_types, "node_types")?;
        let edge_types = type_names(&self.edge_types, "edge_types")?;
        Ok(Layout {
            node_width: nf.len(),
            node_type,
            node_name: position(nf, "name", "node_fields")?,
            node_id: position(nf, "id", "node_fields")?,
            node_size: position(nf, "self_size", "node_fields")?,
            node_edges: position(nf, "edge_count", "node_fields")?,
            node_trace: nf.iter().position(|f| f == "trace_node_id"),
            node_detachedness: nf.iter().position(|f| f == "detachedness"),
            edge_width: ef.len(),
            edge_type,
            edge_name: position(ef, "name_or_index", "edge_fields")?,
            edge_to: position(ef, "to_node", "edge_fields")?,
            node_types: node_types.iter().enumerate().map(|(i, n)| NodeType::from_name(n, i as u8)).collect(),
            edge_types: edge_types.iter().enumerate().map(|(i, n)| EdgeType::from_name(n, i as u8)).collect(),
            trace: crate::trace::TraceLayout::of(&self.trace_function_info_fields, &self.trace_node_fields),
        })
    }
}
