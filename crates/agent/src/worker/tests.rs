use super::record::splice;

fn list() -> runstore::HolderChain {
    runstore::HolderChain {
        container: "java.util.concurrent.CopyOnWriteArrayList".into(),
        array: "java.lang.Object[]".into(),
        element: "Shop$PriceListener".into(),
        path: vec!["Shop$PriceService".into(), "class Shop".into()],
        ..Default::default()
    }
}

#[test]
fn a_path_that_stops_at_a_replaced_array_goes_on_through_its_list() {
    let path = vec!["Shop$PriceListener".to_string(), "java.lang.Object[]".into(), "…".into()];
    assert_eq!(
        splice(path, "Shop$Cart", &[list()]),
        [
            "Shop$PriceListener",
            "java.lang.Object[]",
            "java.util.concurrent.CopyOnWriteArrayList",
            "Shop$PriceService",
            "class Shop"
        ]
    );
    // Elements of another class, or a path known to its end, stay as they are.
    let other = vec!["Shop$Other".to_string(), "java.lang.Object[]".into(), "…".into()];
    assert_eq!(splice(other.clone(), "Shop$Cart", &[list()]), other);
    let whole = vec!["Shop$PriceListener".to_string(), "class Shop".into()];
    assert_eq!(splice(whole.clone(), "Shop$Cart", &[list()]), whole);
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
