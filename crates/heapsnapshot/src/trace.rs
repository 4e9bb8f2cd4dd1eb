//! Allocation sites, when the snapshot was taken with allocation tracking on (`node
//! --track-heap-objects`, DevTools' "Allocation instrumentation on timeline"): the functions
//! (`trace_function_infos`) and the tree of allocating stacks (`trace_tree`) every node's
//! `trace_node_id` points into.

use rustc_hash::FxHashMap;

use crate::Error;

/// One frame of an allocating stack, as DevTools shows it: the function, and where it starts
/// (not the line that allocates: the trace tree records functions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The function's name (empty for an anonymous one).
    pub function: String,
    /// The script's name or URL.
    pub script: String,
    /// Line in the script where the function starts, from 1 (V8's serializer writes them
    /// from 1; 0 when unknown).
    pub line: u32,
    /// Column in the line where the function starts, from 1.
    pub column: u32,
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.function.is_empty() { "(anonymous)" } else { &self.function };
        write!(f, "{name} ({}:{}:{})", self.script, self.line, self.column)
    }
}

/// Where the fields of a function and of a trace node sit, from `snapshot.meta`.
#[derive(Debug, Clone)]
pub(crate) struct TraceLayout {
    pub function_width: usize,
    pub function_name: usize,
    pub function_script: usize,
    pub function_line: usize,
    pub function_column: usize,
    pub node_width: usize,
    pub node_id: usize,
    pub node_function: usize,
    pub node_count: usize,
    pub node_size: usize,
}

impl TraceLayout {
    /// The layout the meta names, when it names one this reader knows (V8 writes the fields
    /// even when allocations were not tracked): allocation sites are an addition, so a layout
    /// it cannot read leaves them out instead of refusing the snapshot. A node's children must
    /// be its last field.
    pub(crate) fn of(functions: &[String], nodes: &[String]) -> Option<TraceLayout> {
        let at = |fields: &[String], name: &str| fields.iter().position(|f| f == name);
        if nodes.last().map(String::as_str) != Some("children") {
            return None;
        }
        Some(TraceLayout {
            function_width: functions.len(),
            function_name: at(functions, "name")?,
            function_script: at(functions, "script_name")?,
            function_line: at(functions, "line")?,
            function_column: at(functions, "column")?,
            node_width: nodes.len() - 1,
            node_id: at(nodes, "id")?,
            node_function: at(nodes, "function_info_index")?,
            node_count: at(nodes, "count")?,
            node_size: at(nodes, "size")?,
        })
    }
}

/// One node of the allocation tree.
#[derive(Debug, Clone, Copy)]
struct TraceNode {
    /// The caller's trace node id (0 for the tree's root).
    parent: u32,
    /// Index of the function in `functions`.
    function: u32,
    /// Objects allocated there since tracking began, and their bytes (live or not).
    count: u32,
    size: u64,
}

/// The functions and the allocation tree of a snapshot.
#[derive(Debug, Clone)]
pub(crate) struct Traces {
    layout: TraceLayout,
    /// `trace_function_infos`, flat.
    functions: Vec<u64>,
    nodes: FxHashMap<u32, TraceNode>,
}

impl Traces {
    /// The tree parsed from `tree` (the bytes of `trace_tree`, a JSON array nested as deep as
    /// the deepest stack) with `functions` (`trace_function_infos`, flat).
    pub(crate) fn parse(layout: TraceLayout, functions: Vec<u64>, tree: &[u8], at: usize) -> Result<Traces, Error> {
        let mut nodes: FxHashMap<u32, TraceNode> = FxHashMap::default();
        // The parent of the array being read, per nesting level; the fields of the node being
        // read so far; the last node read at each level, whose children come next.
        let mut parents: Vec<u32> = Vec::new();
        let mut fields: Vec<u64> = Vec::with_capacity(layout.node_width);
        let mut last: u32 = 0;
        let mut number: Option<u64> = None;
        let mut depth = 0usize;
        let bad = |what: &str, i: usize| Error::Format { what: format!("{what} in trace_tree"), at: at + i };
        for (i, &b) in tree.iter().enumerate() {
            match b {
                b'0'..=b'9' => {
                    let v = number.unwrap_or(0).checked_mul(10).and_then(|v| v.checked_add(u64::from(b - b'0')));
                    number = Some(v.ok_or_else(|| bad("a number too big", i))?);
                    continue;
                }
                b',' | b']' | b' ' | b'\n' | b'\r' | b'\t' | b'[' => {}
                _ => return Err(bad(&format!("'{}'", b.escape_ascii()), i)),
            }
            if let Some(v) = number.take() {
                fields.push(v);
                if fields.len() == layout.node_width {
                    let id = u32::try_from(fields[layout.node_id]).map_err(|_| bad("a node id too big", i))?;
                    let node = TraceNode {
                        parent: parents.last().copied().unwrap_or(0),
                        function: u32::try_from(fields[layout.node_function])
                            .map_err(|_| bad("a function too big", i))?,
                        count: u32::try_from(fields[layout.node_count]).unwrap_or(u32::MAX),
                        size: fields[layout.node_size],
                    };
                    if node.function as usize * layout.function_width >= functions.len() {
                        return Err(Error::Inconsistent {
                            what: format!(
                                "trace node {id} names function {}, of {}",
                                node.function,
                                functions.len() / layout.function_width.max(1)
                            ),
                            at: at + i,
                        });
                    }
                    nodes.insert(id, node);
                    last = id;
                    fields.clear();
                }
            }
            match b {
                // The top array has no parent; a nested one holds the children of the node before it.
                b'[' => {
                    if depth > 0 {
                        if !fields.is_empty() {
                            return Err(bad("children before a node's fields", i));
                        }
                        parents.push(last);
                    }
                    depth += 1;
                }
                b']' => {
                    depth = depth.checked_sub(1).ok_or_else(|| bad("']' closing nothing", i))?;
                    if depth > 0 {
                        parents.pop();
                    }
                }
                _ => {}
            }
        }
        Ok(Traces { layout, functions, nodes })
    }

    /// The stack that allocated at trace node `id`, innermost frame first (the tree's root, a
    /// frame of no function, left out).
    pub(crate) fn stack(&self, id: u32, string: impl Fn(u32) -> String) -> Vec<Frame> {
        let l = &self.layout;
        let mut out = Vec::new();
        let mut at = id;
        // Ids are the file's: one written twice could make a chain that loops, so a stack is no
        // deeper than the tree has nodes.
        while let Some(n) = self.nodes.get(&at).filter(|_| out.len() < self.nodes.len()) {
            if n.parent == 0 {
                break; // the root
            }
            let f = &self.functions[n.function as usize * l.function_width..][..l.function_width];
            let field = |i: usize| u32::try_from(f[i]).unwrap_or(u32::MAX);
            out.push(Frame {
                function: string(field(l.function_name)),
                script: string(field(l.function_script)),
                line: field(l.function_line),
                column: field(l.function_column),
            });
            at = n.parent;
        }
        out
    }

    /// Objects and bytes allocated at trace node `id` since tracking began, live or not.
    pub(crate) fn allocated(&self, id: u32) -> Option<(u32, u64)> {
        self.nodes.get(&id).map(|n| (n.count, n.size))
    }
}
