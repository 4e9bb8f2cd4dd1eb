use super::record::{fields_by_path, splice};
use crate::walk::{ChainObjects, Step};

fn list() -> runstore::HolderChain {
    runstore::HolderChain {
        container: "java.util.concurrent.CopyOnWriteArrayList".into(),
        array: "java.lang.Object[]".into(),
        element: "Shop$PriceListener".into(),
        path: vec!["Shop$PriceService".into(), "class Shop".into()],
        array_field: "array".into(),
        fields: vec!["listeners".into(), "PRICES".into()],
        ..Default::default()
    }
}

#[test]
fn a_path_that_stops_at_a_replaced_array_goes_on_through_its_list() {
    let path = vec!["Shop$PriceListener".to_string(), "java.lang.Object[]".into(), "…".into()];
    let fields = vec!["cart".to_string(), "[]".into()];
    let (path, fields) = splice(path, fields, "Shop$Cart", &[list()]);
    assert_eq!(
        path,
        [
            "Shop$PriceListener",
            "java.lang.Object[]",
            "java.util.concurrent.CopyOnWriteArrayList",
            "Shop$PriceService",
            "class Shop"
        ]
    );
    // The list's fields follow the watched object's, step for step.
    assert_eq!(fields, ["cart", "[]", "array", "listeners", "PRICES"]);
    // Elements of another class, or a path known to its end, stay as they are.
    let other = vec!["Shop$Other".to_string(), "java.lang.Object[]".into(), "…".into()];
    assert_eq!(splice(other.clone(), Vec::new(), "Shop$Cart", &[list()]).0, other);
    let whole = vec!["Shop$PriceListener".to_string(), "class Shop".into()];
    assert_eq!(splice(whole.clone(), Vec::new(), "Shop$Cart", &[list()]), (whole, vec![String::new(); 2]));
}

#[test]
fn fields_are_named_on_a_few_objects_a_path_and_differing_ones_are_all_said() {
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let registry = path(&["java.util.HashMap$Node", "java.util.HashMap$Node[]", "java.util.HashMap", "class Registry"]);
    let cache = path(&["Cache", "…"]);
    let objects =
        |tag| ChainObjects { container: (tag, 1), steps: vec![Step::Unnamed], indexes: vec![-1], array_index: -1 };
    // 20 sessions in the registry, 3 in the cache.
    let watched: Vec<_> = (0..20)
        .map(|i| (i, 1, registry.clone(), objects(i.into())))
        .chain((20..23).map(|i| (i, 1, cache.clone(), objects(i.into()))))
        .collect();
    let mut asked = Vec::new();
    let fields = fields_by_path(&watched, |chains| {
        asked = chains.iter().map(|c| c.1.container.0).collect();
        chains
            .iter()
            .map(|(p, o)| match p.len() {
                // Two of the registry's sessions are held by their node's key, not its value.
                4 if o.container.0 < 2 => path(&["key", "[]", "table", "SESSIONS"]),
                4 => path(&["value", "[]", "table", "SESSIONS"]),
                _ => path(&["", ""]),
            })
            .collect()
    });
    assert_eq!(asked.len(), 8 + 3, "at most eight objects of a path are named: {asked:?}");
    assert_eq!(fields[&registry], ["key|value", "[]", "table", "SESSIONS"]);
    assert_eq!(fields[&cache], ["", ""]);
}

#[test]
fn a_path_a_later_walk_stops_short_of_is_kept_from_the_earlier_walk() {
    let v = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let whole =
        v(&["org.apache.catalina.session.StandardManager", "org.apache.catalina.core.StandardContext", "root 2"]);
    // Nothing known, or the same holders as far as known: the earlier path goes on.
    assert_eq!(super::known_further(&v(&["…"]), &whole), Some(&whole[..]));
    assert_eq!(super::known_further(&v(&[&whole[0], "…"]), &whole), Some(&whole[..]));
    // Another holder, a path this walk knows whole, or an earlier one that stopped too: kept as walked.
    assert_eq!(super::known_further(&v(&["Other", "…"]), &whole), None);
    assert_eq!(super::known_further(&v(&["class Shop"]), &whole), None);
    assert_eq!(super::known_further(&v(&["…"]), &v(&["Other", "…"])), None);
}

#[test]
fn a_chain_after_a_walk_filtered_by_class_is_as_big_as_its_last_reading() {
    // The listener list's array was 54 KB at the last whole walk and read at 120 KB since.
    let read = runstore::HolderChain { bytes: 54_464, sizes: vec![(1_000, 110_000), (2_000, 120_824)], ..list() };
    let mut after_filtered = read.clone();
    super::date(&mut after_filtered, 2_500, false);
    assert_eq!((after_filtered.time_ms, after_filtered.bytes), (2_500, 120_824));
    // A whole walk measured every array it names.
    let mut after_whole = read.clone();
    super::date(&mut after_whole, 2_500, true);
    assert_eq!((after_whole.time_ms, after_whole.bytes), (2_500, 54_464));
    // A container never read keeps the walk's size.
    let mut unread = runstore::HolderChain { sizes: Vec::new(), ..read };
    super::date(&mut unread, 2_500, false);
    assert_eq!(unread.bytes, 54_464);
}

#[test]
fn a_forked_walks_chain_carries_every_forked_reading_of_its_array() {
    // Three forked walks of a growing list: each gives the chain anew, with its own size; the
    // sizes the chain carries (as `keep_known` hands them on) gain each walk's reading.
    let mut chain = runstore::HolderChain { id: 7, ..list() };
    for (at, bytes) in [(1_000, 12_000), (2_000, 40_000), (3_000, 90_000)] {
        let mut walked = runstore::HolderChain { id: 7, bytes, sizes: Vec::new(), ..list() };
        walked.sizes = chain.sizes.clone();
        super::date(&mut walked, at, true);
        super::read_at_walk(&mut walked, at);
        chain = walked;
    }
    assert_eq!(chain.sizes, [(1_000, 12_000), (2_000, 40_000), (3_000, 90_000)]);
    // A container with no number is followed by no reading.
    let mut unnumbered = runstore::HolderChain { id: 0, bytes: 5, ..list() };
    super::read_at_walk(&mut unnumbered, 1_000);
    assert!(unnumbered.sizes.is_empty());
}
