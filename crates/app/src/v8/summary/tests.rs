use heapsnapshot::read;

use super::summarize;

const META: &str = r#"{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic"],"string","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}"#;

/// An edge as (type, name, target node).
type EdgeRow<'a> = (usize, &'a str, usize);

/// A snapshot's JSON from nodes given as (type, name, edges), the names interned in order of
/// first use, as V8 writes them.
fn snapshot(nodes: &[(usize, &str, Vec<EdgeRow<'_>>)]) -> Vec<u8> {
    let mut strings: Vec<String> = Vec::new();
    let mut intern = |s: &str| match strings.iter().position(|t| t == s) {
        Some(i) => i,
        None => {
            strings.push(s.to_owned());
            strings.len() - 1
        }
    };
    let (mut node_values, mut edge_values) = (Vec::new(), Vec::new());
    for (i, (kind, name, edges)) in nodes.iter().enumerate() {
        node_values.extend([*kind, intern(name), 2 * i + 1, 16, edges.len()]);
        for (kind, name, to) in edges {
            edge_values.extend([*kind, intern(name), to * 5]);
        }
    }
    let join = |v: &[usize]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
    let strings: Vec<String> = strings.iter().map(|s| format!("{s:?}")).collect();
    format!(
        r#"{{"snapshot":{{"meta":{META},"node_count":{},"edge_count":{}}},"nodes":[{}],"edges":[{}],"strings":[{}]}}"#,
        nodes.len(),
        edge_values.len() / 3,
        join(&node_values),
        join(&edge_values),
        strings.join(",")
    )
    .into_bytes()
}

/// The path of the place of the first object of class `class`, root first, as (via, class).
fn path_to(summary: &growth::HeapSummary, class: &str) -> Vec<(String, String)> {
    let mut at = summary.paths.iter().position(|p| p.class == class);
    let mut out = Vec::new();
    while let Some(i) = at {
        let p = &summary.paths[i];
        out.push((p.via.clone(), p.class.clone()));
        at = p.parent.map(|q| q as usize);
    }
    out.reverse();
    out
}

#[test]
fn a_context_two_functions_reach_at_one_depth_has_one_place_whatever_the_edges_order() {
    // The root holds a server and a timer; the server's handler and the timer's callback are
    // two functions of one module, so both reach the module's context, which holds `sessions`.
    let heap = |server_first: bool| {
        let (closure, object, hidden, synthetic) = (5, 3, 0, 9);
        let (context, property, internal) = (0, 2, 3);
        let roots = if server_first {
            vec![(internal, "1", 1), (internal, "2", 2)]
        } else {
            vec![(internal, "2", 2), (internal, "1", 1)]
        };
        let h = snapshot(&[
            (synthetic, "(root)", roots),
            (object, "Server", vec![(property, "handler", 3)]),
            (object, "Timer", vec![(property, "callback", 4)]),
            (closure, "handle", vec![(internal, "context", 5)]),
            (closure, "tick", vec![(internal, "context", 5)]),
            (hidden, "system / Context", vec![(context, "sessions", 6)]),
            (object, "Map", vec![(internal, "table", 7)]),
            (object, "Session", vec![]),
        ]);
        summarize(&read(h, &graph::NoProgress).unwrap(), "test")
    };
    let (one, other) = (heap(true), heap(false));
    let path = path_to(&one, "Map");
    assert_eq!(path, path_to(&other, "Map"), "the Map moved with the order of the root's edges");
    let tail: Vec<&str> = path.iter().rev().take(3).map(|(via, _)| via.as_str()).collect();
    assert_eq!(tail[..2], ["sessions", "context"], "{path:?}");
    assert!(["handler", "callback"].contains(&tail[2]), "{path:?}");
}

#[test]
fn a_context_v8_holds_for_work_under_way_keeps_the_place_it_has_in_the_other_snapshots() {
    // The root holds a server whose handler's context holds `sessions`. While a snapshot is
    // written, V8 may hold that context from its handle scopes or an identity map among its
    // strong roots (seen in one snapshot of six of a Node.js series): a path of two steps,
    // where the lasting one has four. The Map keeps the lasting one's place.
    let heap = |under_way: Option<&str>| {
        let (closure, object, hidden, synthetic) = (5, 3, 0, 9);
        let (context, property, internal) = (0, 2, 3);
        let mut roots = vec![(internal, "1", 1)];
        if under_way.is_some() {
            roots.push((internal, "2", 2));
        }
        let work = under_way.unwrap_or("(Handle scope)");
        let h = snapshot(&[
            (synthetic, "(root)", roots),
            (object, "Server", vec![(property, "handler", 3)]),
            (synthetic, work, vec![(internal, "0 / IdentityMapBase", 4)]),
            (closure, "handle", vec![(internal, "context", 4)]),
            (hidden, "system / Context", vec![(context, "sessions", 5)]),
            (object, "Map", vec![(internal, "table", 6)]),
            (object, "Session", vec![]),
        ]);
        summarize(&read(h, &graph::NoProgress).unwrap(), "test")
    };
    let lasting = path_to(&heap(None), "Map");
    assert_eq!(lasting.first().map(|s| s.1.as_str()), Some("Server"), "{lasting:?}");
    for work in ["(Handle scope)", "(Strong roots)", "(Stack roots)"] {
        assert_eq!(path_to(&heap(Some(work)), "Map"), lasting, "the Map moved to {work}");
    }
}
