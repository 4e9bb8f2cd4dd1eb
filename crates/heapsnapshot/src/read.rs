//! From a snapshot's bytes to a [`V8Heap`]: the top-level keys in any order, `snapshot`
//! checked first, the integer arrays parsed into columns as they stream past, the strings
//! located.

use graph::{IntsWriter, Progress};

use crate::bytes::SnapshotBytes;
use crate::json::Scanner;
use crate::meta::{Layout, SnapshotHead};
use crate::model::V8Heap;
use crate::Error;

/// True when `head`, a file's first bytes, starts as a heap snapshot does: a JSON object
/// whose first key is `snapshot`.
pub fn looks_like_snapshot(head: &[u8]) -> bool {
    let mut s = Scanner::new(head);
    s.expect(b'{', "the document").is_ok() && matches!(s.string("a key"), Ok((_, b"snapshot")))
}

/// Reads the snapshot in `bytes` (the file, mapped or in memory), which the result keeps for
/// its strings; its columns' temporary files go to the system's temporary directory.
pub fn read<B: SnapshotBytes + 'static>(bytes: B, progress: &dyn Progress) -> Result<V8Heap, Error> {
    read_in(bytes, None, progress)
}

/// [`read`], the columns' temporary files in `dir` (the system's for `None`).
pub fn read_in<B: SnapshotBytes + 'static>(
    bytes: B,
    dir: Option<&std::path::Path>,
    progress: &dyn Progress,
) -> Result<V8Heap, Error> {
    let done_with = |offset, len| bytes.done_with(offset, len);
    let parsed = parse(Scanner::releasing(bytes.as_ref(), &done_with), dir, progress)?;
    Ok(parsed.into_heap(Box::new(bytes)))
}

/// What the scan found, before the heap takes the bytes it was read from.
struct Parsed {
    layout: Layout,
    columns: Columns,
    strings: Vec<(u64, u32)>,
    traces: Option<crate::trace::Traces>,
}

impl Parsed {
    fn into_heap(self, bytes: Box<dyn SnapshotBytes>) -> V8Heap {
        let c = self.columns;
        V8Heap {
            bytes,
            layout: self.layout,
            node_type: c.node_type,
            node_name: c.node_name.finish(),
            node_id: c.node_id.finish(),
            node_size: c.node_size.finish(),
            big_sizes: c.big_sizes,
            detachedness: c.detachedness,
            trace_node: c.trace_node,
            edges: graph::Csr::from_parts(c.offsets.finish(), c.targets.finish()),
            edge_type: c.edge_type,
            edge_name: c.edge_name.finish(),
            strings: self.strings,
            traces: self.traces,
        }
    }
}

struct Columns {
    node_type: Vec<u8>,
    node_name: IntsWriter,
    node_id: IntsWriter,
    node_size: IntsWriter,
    big_sizes: Vec<(u32, u64)>,
    detachedness: Option<Vec<u8>>,
    trace_node: Option<Vec<u32>>,
    offsets: IntsWriter,
    targets: IntsWriter,
    edge_type: Vec<u8>,
    edge_name: IntsWriter,
    /// The biggest string index a node or a named edge uses, checked once strings are known.
    max_name: Option<(u32, usize)>,
}

fn parse(mut s: Scanner<'_>, dir: Option<&std::path::Path>, progress: &dyn Progress) -> Result<Parsed, Error> {
    let data = s.data();
    s.expect(b'{', "the document")?;
    let mut head: Option<(SnapshotHead, Layout)> = None;
    let mut columns: Option<Columns> = None;
    let mut edges_read = false;
    let mut strings = None;
    let mut functions: Option<Vec<u64>> = None;
    let mut tree: Option<(usize, usize)> = None;
    progress.start("reading the heap snapshot", data.len() as u64);
    loop {
        let (key_at, key) = s.string("the document's keys")?;
        s.expect(b':', "the document")?;
        match key {
            b"snapshot" => {
                let start = s.skip_value("snapshot")?;
                let parsed: SnapshotHead =
                    serde_json::from_slice(&data[start..s.pos]).map_err(|e| Error::Meta(format!("snapshot: {e}")))?;
                let layout = parsed.meta.layout()?;
                head = Some((parsed, layout));
            }
            b"nodes" => {
                let (h, layout) = head.as_ref().ok_or_else(|| before(key_at, "nodes"))?;
                columns = Some(nodes(&mut s, h, layout, dir, progress)?);
            }
            b"edges" => {
                let (h, layout) = head.as_ref().ok_or_else(|| before(key_at, "edges"))?;
                let c = columns
                    .as_mut()
                    .ok_or_else(|| Error::Format { what: "\"edges\" before \"nodes\"".into(), at: key_at })?;
                edges(&mut s, h, layout, c, progress)?;
                edges_read = true;
            }
            b"strings" => strings = Some(s.strings("strings")?),
            b"trace_function_infos" => {
                let mut f = Vec::new();
                s.uints("trace_function_infos", &graph::NoProgress, |v, _| {
                    f.push(v);
                    Ok(())
                })?;
                functions = Some(f);
            }
            b"trace_tree" => {
                let start = s.skip_value("trace_tree")?;
                tree = Some((start, s.pos));
            }
            _ => {
                s.skip_value("the document")?;
            }
        }
        match s.peek() {
            Some(b',') => s.pos += 1,
            Some(b'}') => break,
            Some(b) => {
                return Err(Error::Format {
                    what: format!("'{}' after a value of the document", b.escape_ascii()),
                    at: s.pos,
                })
            }
            None => return Err(Error::Cut { at: data.len(), inside: "the document" }),
        }
    }
    progress.finish();
    let (_, layout) = head.ok_or_else(|| missing("snapshot"))?;
    let c = columns.ok_or_else(|| missing("nodes"))?;
    if !edges_read {
        return Err(missing("edges"));
    }
    let strings = strings.ok_or_else(|| missing("strings"))?;
    if let Some((max, at)) = c.max_name.filter(|&(m, _)| m as usize >= strings.len()) {
        return Err(Error::Inconsistent { what: format!("string {max} named, of {} strings", strings.len()), at });
    }
    let traces = match (&layout.trace, functions, tree) {
        (Some(l), Some(f), Some((start, end))) if c.trace_node.is_some() => {
            if f.len() % l.function_width.max(1) != 0 {
                return Err(Error::Inconsistent {
                    what: format!("{} values in trace_function_infos, not records of {}", f.len(), l.function_width),
                    at: start,
                });
            }
            Some(crate::trace::Traces::parse(l.clone(), f, &data[start..end], start)?)
        }
        _ => None,
    };
    Ok(Parsed { layout, columns: c, strings, traces })
}

fn before(at: usize, what: &str) -> Error {
    Error::Format { what: format!("\"{what}\" before \"snapshot\", whose meta says how to read it"), at }
}

fn missing(what: &str) -> Error {
    Error::Format { what: format!("no \"{what}\""), at: 0 }
}

fn narrow(v: u64, what: &str, at: usize) -> Result<u32, Error> {
    u32::try_from(v).map_err(|_| Error::Inconsistent { what: format!("{what} {v} is 2^32 or more"), at })
}

fn nodes(
    s: &mut Scanner<'_>,
    h: &SnapshotHead,
    l: &Layout,
    dir: Option<&std::path::Path>,
    progress: &dyn Progress,
) -> Result<Columns, Error> {
    let n = usize::try_from(h.node_count).unwrap_or(usize::MAX);
    if n == 0 || n > u32::MAX as usize {
        return Err(Error::Meta(format!(
            "node_count {} (a snapshot holds at least its root, and fewer than 2^32 nodes)",
            h.node_count
        )));
    }
    let cap = n.min(s.len() / (2 * l.node_width) + 1);
    let mut c = Columns {
        node_type: Vec::with_capacity(cap),
        // Written to temporary files as they are read: the commands read them once each, and
        // the dominator tree's phases not at all, so their pages leave memory meanwhile.
        node_name: IntsWriter::in_file(u64::from(u32::MAX), dir),
        node_id: IntsWriter::in_file(u64::from(u32::MAX), dir),
        node_size: IntsWriter::in_file(u64::from(u32::MAX), dir),
        big_sizes: Vec::new(),
        detachedness: l.node_detachedness.map(|_| Vec::with_capacity(cap)),
        trace_node: (h.trace_function_count > 0).then_some(l.node_trace).flatten().map(|_| Vec::with_capacity(cap)),
        // The edges too: the dominator tree's phases after the search do not read them.
        offsets: IntsWriter::in_file(h.edge_count, dir),
        targets: IntsWriter::in_file(n as u64, dir),
        edge_type: Vec::new(),
        edge_name: IntsWriter::in_file(u64::from(u32::MAX), dir),
        max_name: None,
    };
    c.offsets.push(0);
    let types = l.node_types.len() as u64;
    let (mut field, mut edges_total) = (0usize, 0u64);
    let count = s.uints("nodes", progress, |v, at| {
        match field {
            f if f == l.node_type => {
                if v >= types {
                    return Err(Error::Inconsistent { what: format!("node type {v} of {types}"), at });
                }
                c.node_type.push(v as u8);
            }
            f if f == l.node_name => {
                let name = narrow(v, "a node name", at)?;
                if c.max_name.is_none_or(|(m, _)| name > m) {
                    c.max_name = Some((name, at));
                }
                c.node_name.push(u64::from(name));
            }
            f if f == l.node_id => c.node_id.push(u64::from(narrow(v, "a node id", at)?)),
            f if f == l.node_size => match u32::try_from(v) {
                Ok(size) if size != u32::MAX => c.node_size.push(u64::from(size)),
                _ => {
                    c.big_sizes.push((c.node_size.len() as u32, v));
                    c.node_size.push(u64::from(u32::MAX));
                }
            },
            f if f == l.node_edges => {
                edges_total += v;
                if edges_total > h.edge_count {
                    return Err(Error::Inconsistent {
                        what: format!("nodes have more edges than edge_count {}", h.edge_count),
                        at,
                    });
                }
                c.offsets.push(edges_total);
            }
            f if Some(f) == l.node_detachedness => {
                if let Some(d) = c.detachedness.as_mut() {
                    d.push(v.min(u64::from(u8::MAX)) as u8);
                }
            }
            f if Some(f) == l.node_trace => {
                if let Some(t) = c.trace_node.as_mut() {
                    t.push(narrow(v, "a trace node id", at)?);
                }
            }
            _ => {}
        }
        field += 1;
        if field == l.node_width {
            field = 0;
            if c.node_type.len() > n {
                return Err(Error::Inconsistent { what: format!("more nodes than node_count {n}"), at });
            }
        }
        Ok(())
    });
    whole_records(count?, n, l.node_width, "nodes", "node_count", s.pos)?;
    if edges_total != h.edge_count {
        return Err(Error::Inconsistent {
            what: format!("nodes have {edges_total} edges, edge_count says {}", h.edge_count),
            at: s.pos,
        });
    }
    Ok(c)
}

fn edges(
    s: &mut Scanner<'_>,
    h: &SnapshotHead,
    l: &Layout,
    c: &mut Columns,
    progress: &dyn Progress,
) -> Result<(), Error> {
    let m = usize::try_from(h.edge_count).unwrap_or(usize::MAX);
    let cap = m.min(s.len() / (2 * l.edge_width) + 1);
    c.edge_type.reserve_exact(cap);
    let types = l.edge_types.len() as u64;
    let node_width = l.node_width as u64;
    let nodes_len = c.node_type.len() as u64 * node_width;
    let mut field = 0usize;
    let mut numbered = false;
    let count = s.uints("edges", progress, |v, at| {
        match field {
            f if f == l.edge_type => {
                if v >= types {
                    return Err(Error::Inconsistent { what: format!("edge type {v} of {types}"), at });
                }
                numbered = l.edge_types[v as usize].is_numbered();
                c.edge_type.push(v as u8);
            }
            f if f == l.edge_name => {
                let name = narrow(v, "an edge name or index", at)?;
                if !numbered && c.max_name.is_none_or(|(m, _)| name > m) {
                    c.max_name = Some((name, at));
                }
                c.edge_name.push(u64::from(name));
            }
            f if f == l.edge_to => {
                if v % node_width != 0 || v >= nodes_len {
                    return Err(Error::Inconsistent {
                        what: format!("an edge to {v}, not the start of one of the {} nodes", c.node_type.len()),
                        at,
                    });
                }
                if c.targets.len() >= m {
                    return Err(Error::Inconsistent { what: format!("more edges than edge_count {m}"), at });
                }
                c.targets.push(v / node_width);
            }
            _ => {}
        }
        field += 1;
        if field == l.edge_width {
            field = 0;
        }
        Ok(())
    })?;
    whole_records(count, m, l.edge_width, "edges", "edge_count", s.pos)
}

/// Checks that an array of `count` numbers holds `records` records of `width` fields, as the
/// snapshot's `counted` says.
fn whole_records(count: u64, records: usize, width: usize, array: &str, counted: &str, at: usize) -> Result<(), Error> {
    if count == (records * width) as u64 {
        return Ok(());
    }
    Err(Error::Inconsistent {
        what: format!(
            "{count} numbers in {array}, where {counted} {records} of {width} fields each makes {}",
            records * width
        ),
        at,
    })
}
