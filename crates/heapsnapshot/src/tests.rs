use graph::{Graph, NoProgress};
use proptest::prelude::*;

use crate::{looks_like_snapshot, read, EdgeType, Error, NodeIdx, NodeType};

const META: &str = r#"{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],"trace_function_info_fields":[],"trace_node_fields":[],"sample_fields":[],"location_fields":[]}"#;

/// A root, a `Map` with a property `store` to an `Array`, the array's two elements (an object
/// `Session` and a string), and a weak edge from the root to a `Cache`, as V8 writes them.
fn small() -> String {
    // type, name, id, self_size, edge_count, trace_node_id, detachedness
    let nodes = [
        [9, 0, 1, 0, 2, 0, 0],   // (root): store -> Map, weak -> Cache
        [3, 1, 3, 32, 1, 0, 0],  // Map: property "store" -> Array
        [3, 2, 5, 16, 2, 0, 0],  // Array: [0] -> Session, [1] -> string
        [3, 3, 7, 40, 0, 0, 0],  // Session
        [2, 4, 9, 24, 0, 0, 0],  // "hello \"x\"\n\u00e9"
        [3, 5, 11, 56, 0, 0, 0], // Cache, held weakly only
    ];
    let w = 7;
    // type, name_or_index, to_node (a node's index times the node width)
    let edges = [[2, 6, w], [6, 7, 5 * w], [2, 6, 2 * w], [1, 0, 3 * w], [1, 1, 4 * w]];
    let strings = [
        r#""(root)""#,
        r#""Map""#,
        r#""Array""#,
        r#""Session""#,
        r#""hello \"x\"\n\u00e9""#,
        r#""Cache""#,
        r#""store""#,
        r#""cache""#,
    ];
    let flat = |rows: &[&[usize]]| {
        rows.iter()
            .map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
            .join(",\n")
    };
    let node_rows: Vec<&[usize]> = nodes.iter().map(|r| &r[..]).collect();
    let edge_rows: Vec<&[usize]> = edges.iter().map(|r| &r[..]).collect();
    format!(
        "{{\"snapshot\":{{\"meta\":{META},\"node_count\":{},\"edge_count\":{},\"trace_function_count\":0}},\n\"nodes\":[{}],\n\"edges\":[{}],\n\"trace_function_infos\":[],\"trace_tree\":[],\"samples\":[],\"locations\":[],\n\"strings\":[{}]}}",
        nodes.len(),
        edges.len(),
        flat(&node_rows),
        flat(&edge_rows),
        strings.join(",\n")
    )
}

#[test]
fn a_small_snapshot_reads_into_nodes_edges_and_names() {
    let text = small();
    assert!(looks_like_snapshot(text.as_bytes()));
    let h = read(text.into_bytes(), &NoProgress).unwrap();
    assert_eq!((h.node_count(), h.edge_count()), (6, 5));
    assert_eq!(h.node_type(NodeIdx(0)), NodeType::Synthetic);
    assert_eq!(h.name(NodeIdx(1)), "Map");
    assert_eq!(h.id(NodeIdx(3)), 7);
    assert_eq!(h.self_size(NodeIdx(5)), 56);
    assert_eq!(h.name(NodeIdx(4)), "hello \"x\"\n\u{e9}");
    assert_eq!(h.class_name(NodeIdx(4)), "(string)");
    assert_eq!(h.class_name(NodeIdx(3)), "Session");
    assert_eq!(h.class_name(NodeIdx(0)), "(synthetic)");
    let labels: Vec<String> = h.edges(NodeIdx(2)).map(|e| h.edge_label(&e)).collect();
    assert_eq!(labels, ["[0]", "[1]"]);
    let root: Vec<(EdgeType, String)> = h.edges(NodeIdx(0)).map(|e| (e.kind, h.edge_label(&e))).collect();
    assert_eq!(root, [(EdgeType::Property, "store".to_owned()), (EdgeType::Weak, "cache".to_owned())]);
    assert_eq!(h.detachedness(NodeIdx(3)), Some(0));
    assert_eq!(h.trace_node(NodeIdx(3)), None, "no allocation tracking: no trace column");
}

#[test]
fn weak_edges_do_not_retain() {
    let h = read(small().into_bytes(), &NoProgress).unwrap();
    let mut succ = Vec::new();
    h.successors(0, &mut |n| succ.push(n));
    assert_eq!(succ, [1], "the weak edge to Cache is not followed");
    let dom = graph::dominators(&h, 0, &NoProgress);
    let sums = dom.subtree_sums(|v| h.self_size(NodeIdx(v as u32)));
    assert_eq!(sums.get(1), 32 + 16 + 40 + 24, "the Map retains its array and what that holds");
    assert_eq!(sums.get(5), 0, "only weakly held: not live");
}

fn error_of(text: &str) -> Error {
    match read(text.as_bytes().to_vec(), &NoProgress) {
        Ok(h) => panic!("read {h:?} from a bad snapshot"),
        Err(e) => e,
    }
}

#[test]
fn a_cut_snapshot_says_where_it_ends() {
    let text = small();
    let at = text.find("\"edges\"").unwrap() + 20;
    let e = error_of(&text[..at]);
    assert!(matches!(e, Error::Cut { at: a, inside: "edges" } if a == at), "{e}");
}

#[test]
fn counts_that_disagree_with_the_arrays_are_named() {
    let text = small();
    let e = error_of(&text.replacen("\"edge_count\":5", "\"edge_count\":6", 1));
    assert!(e.to_string().contains("nodes have 5 edges, edge_count says 6"), "{e}");
    let e = error_of(&text.replacen("\"node_count\":6", "\"node_count\":7", 1));
    assert!(e.to_string().contains("where node_count 7"), "{e}");
    // An edge to the middle of a node.
    let e = error_of(&text.replacen("[2,6,7,", "[2,6,8,", 1).replacen("\"edges\":[2,6,7", "\"edges\":[2,6,8", 1));
    assert!(e.to_string().contains("an edge to 8"), "{e}");
    let e = error_of(&text.replacen("\"node_fields\":[\"type\",\"name\"", "\"node_fields\":[\"kind\",\"name\"", 1));
    assert!(matches!(e, Error::Meta(_)) && e.to_string().contains("no \"type\""), "{e}");
}

#[test]
fn not_a_snapshot_is_said_so() {
    assert!(!looks_like_snapshot(b"JAVA PROFILE 1.0.2\0"));
    assert!(!looks_like_snapshot(b"{\"nodes\":[]}"));
    let e = error_of("{\"nodes\":[1,2]}");
    assert!(e.to_string().contains("\"nodes\" before \"snapshot\""), "{e}");
}

proptest! {
    #[test]
    fn any_prefix_or_byte_change_is_an_error_or_a_heap_never_a_panic(cut in 0usize..2000, at in 0usize..2000, byte in any::<u8>()) {
        let text = small().into_bytes();
        let cut = cut.min(text.len());
        let _ = read(text[..cut].to_vec(), &NoProgress);
        let mut changed = text.clone();
        let at = at.min(changed.len() - 1);
        changed[at] = byte;
        if let Ok(h) = read(changed, &NoProgress) {
            for n in h.nodes() {
                let _ = (h.class_name(n), h.self_size(n));
                h.edges(n).for_each(|e| drop(h.edge_label(&e)));
            }
            let _ = graph::dominators(&h, 0, &NoProgress);
        }
    }
}

/// [`small`] taken with allocation tracking on: the `Session` allocated by `store` (in
/// script `Array`, starting at line 4 column 2), called from `Map`; the tree's root frames
/// nothing.
fn tracked() -> String {
    small()
        .replace(r#""trace_function_infos":[],"trace_tree":[]"#, r#""trace_function_infos":[1,1,2,7,0,0, 2,6,2,7,4,2],"trace_tree":[1,0,0,0,[2,0,3,120,[3,1,1,40,[]]]]"#)
        .replace(r#""trace_function_info_fields":[],"trace_node_fields":[]"#, r#""trace_function_info_fields":["function_id","name","script_name","script_id","line","column"],"trace_node_fields":["id","function_info_index","count","size","children"]"#)
        .replace(r#""trace_function_count":0"#, r#""trace_function_count":2"#)
        .replace("3,3,7,40,0,0,0", "3,3,7,40,0,3,0")
}

#[test]
fn a_tracked_snapshot_gives_each_node_its_allocating_stack() {
    let h = read(tracked().into_bytes(), &NoProgress).unwrap();
    assert!(h.has_allocation_sites());
    let stack: Vec<String> = h.allocation_stack(NodeIdx(3)).unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(stack, ["store (Array:4:2)", "Map (Array:0:0)"]);
    assert_eq!(h.allocated_at_site(NodeIdx(3)), Some((1, 40)));
    assert_eq!(h.allocation_stack(NodeIdx(1)), None, "not tracked: trace node 0");
    // Without tracking, no sites and no error.
    let plain = read(small().into_bytes(), &NoProgress).unwrap();
    assert!(!plain.has_allocation_sites() && plain.allocation_stack(NodeIdx(3)).is_none());
}

#[test]
fn a_trace_tree_naming_a_function_that_is_not_there_is_refused() {
    let bad = tracked().replace("[3,1,1,40,[]]", "[3,9,1,40,[]]");
    assert!(matches!(read(bad.into_bytes(), &NoProgress), Err(Error::Inconsistent { .. })));
}

#[test]
fn a_trace_tree_whose_ids_repeat_gives_stacks_that_end() {
    // Node 2 again below node 3: its parent chain would loop.
    let looped = tracked().replace("[3,1,1,40,[]]", "[3,1,1,40,[2,0,1,8,[]]]");
    let h = read(looped.into_bytes(), &NoProgress).unwrap();
    assert!(h.allocation_stack(NodeIdx(3)).unwrap().len() <= 3);
}
