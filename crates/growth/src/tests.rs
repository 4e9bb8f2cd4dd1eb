use crate::analyze::head_by_application_class;
use crate::{analyze_run, headline_candidates, ClassVolume, ContainerHolder, EdgeVolume, HeapSummary, Options};

/// A heap at `ms` with `class` at `bytes`, beside a steady 50 MiB.
fn heap(ms: u64, class: &str, bytes: u64) -> HeapSummary {
    HeapSummary {
        source: format!("gc {ms}"),
        time_ms: Some(1_000_000 + ms),
        total_bytes: bytes + (50 << 20),
        classes: vec![
            ClassVolume { name: class.into(), instances: bytes / 300, bytes },
            ClassVolume { name: "Other".into(), instances: 1000, bytes: 50 << 20 },
        ],
        ..Default::default()
    }
}

#[test]
fn walks_that_reach_no_growth_refute_the_growth_of_samples() {
    // Samples every 300 ms over 24 s whose byte[] climbs from 16 to 24 MiB, as samples that
    // count promoted garbage can; walks at 0.1 s and 16 s.
    let samples: Vec<HeapSummary> =
        (0..80u64).map(|i| heap(i * 300, "byte[]", (16 << 20) + i * (100 << 10) + (i % 3) * (40 << 10))).collect();
    let o = Options::default().for_samples(64 << 10);
    let explain = ["byte[]".to_string()];
    let growing = analyze_run(&samples, &[], &[], &o, &explain);
    assert_eq!(growing.candidates.len(), 1, "without walks the samples' growth stands");
    // Walks that found 1.5 MiB then 0.9 MiB reachable: not a leak.
    let walks = [heap(100, "byte[]", 1_536 << 10), heap(16_000, "byte[]", 900 << 10)];
    let refuted = analyze_run(&samples, &walks, &[], &o, &explain);
    assert!(refuted.candidates.is_empty(), "{:?}", refuted.candidates);
    assert!(refuted.explained[0].verdict.contains("dead objects"), "{}", refuted.explained[0].verdict);
    // Walks that found it growing as the samples do: the candidate stays.
    let walks = [heap(100, "byte[]", 1 << 20), heap(16_000, "byte[]", 6 << 20)];
    assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
    // Walks too close together to speak for the series: no judgement from them.
    let walks = [heap(100, "byte[]", 1 << 20), heap(4_000, "byte[]", 1 << 20)];
    assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
    // Walks every second that see it grow as the samples do, all along: the candidate stays.
    let walk_at = |i: u64, bytes: u64| heap(i * 1_000 + 50, "byte[]", bytes);
    let walks: Vec<HeapSummary> = (0..24).map(|i| walk_at(i, (1 << 20) + i * (340 << 10))).collect();
    assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
    // Walks that see all of the growth in the first second and none after: a cache that
    // filled up (the agent test `run_reports_nothing_for_a_cache_that_filled_up`).
    let walks: Vec<HeapSummary> = (0..24).map(|i| walk_at(i, if i == 0 { 200 << 10 } else { 8 << 20 })).collect();
    let filled = analyze_run(&samples, &walks, &[], &o, &explain);
    assert!(filled.candidates.is_empty(), "{:?}", filled.candidates);
    assert!(filled.explained[0].verdict.contains("second half"), "{}", filled.explained[0].verdict);
}

#[test]
fn a_leak_that_slows_down_is_judged_by_the_samples_of_each_window() {
    // A leak that grows 300 KiB per sample for 12 s, then 80 KiB per sample (the program
    // got less work): it still grows, and the walks every second see what the samples see.
    let at = |i: u64| if i < 40 { i * (300 << 10) } else { 40 * (300 << 10) + (i - 40) * (80 << 10) };
    let samples: Vec<HeapSummary> = (0..80u64).map(|i| heap(i * 300, "Widget", (1 << 20) + at(i))).collect();
    let walks: Vec<HeapSummary> =
        (0..24u64).map(|i| heap(i * 1_000 + 50, "Widget", (1 << 20) + at((i * 1_000 + 50) / 300))).collect();
    let o = Options::default().for_samples(64 << 10);
    let explain = ["Widget".to_string()];
    // Spread evenly over the span, the series' 14.8 MiB predicted 6.9 MiB over the second
    // half's 11 s of walks, which saw the 2.9 MiB that the samples of those 11 s saw: less
    // than half, and so refuted before.
    let report = analyze_run(&samples, &walks, &[], &o, &explain);
    assert_eq!(report.candidates.len(), 1, "{:?}", report.explained);
    // The same samples beside walks that stop growing at 12 s (a structure that filled
    // up while the samples counted garbage): refuted over the second half.
    let filled: Vec<HeapSummary> =
        (0..24u64).map(|i| heap(i * 1_000 + 50, "Widget", (1 << 20) + at(((i * 1_000 + 50) / 300).min(40)))).collect();
    let refuted = analyze_run(&samples, &filled, &[], &o, &explain);
    assert!(refuted.candidates.is_empty(), "{:?}", refuted.candidates);
    assert!(refuted.explained[0].verdict.contains("second half"), "{}", refuted.explained[0].verdict);
}

fn candidate(class: &str, same: Option<&str>) -> report::Candidate {
    report::Candidate {
        class: class.into(),
        rank: 1.0,
        phases: 3,
        volumes: vec![],
        instances: vec![],
        growth_bytes: 1,
        slice: report::Slice::default(),
        holders: vec![],
        allocation_sites: vec![],
        same_structure_as: same.map(Into::into),
    }
}

#[test]
fn an_application_class_heads_the_group_it_grows_in() {
    let mut c = vec![
        candidate("java.lang.String", None),
        candidate("byte[]", Some("java.lang.String")),
        candidate("java.util.HashMap$Node", None),
        candidate("org.apache.catalina.session.StandardSession", Some("java.lang.String")),
    ];
    head_by_application_class(&mut c);
    let order: Vec<(&str, Option<&str>)> =
        c.iter().map(|c| (c.class.as_str(), c.same_structure_as.as_deref())).collect();
    let session = "org.apache.catalina.session.StandardSession";
    assert_eq!(
        order,
        [
            (session, None),
            ("java.lang.String", Some(session)),
            ("byte[]", Some(session)),
            ("java.util.HashMap$Node", None),
        ]
    );
}

#[test]
fn a_container_whose_array_grew_between_walks_is_the_structure_and_names_its_holder() {
    // Listeners pile up for 24 s; two walks at the start saw the list's array and the
    // classes holding them; after that no walk fits, and the array is read every second.
    let samples: Vec<HeapSummary> =
        (0..80u64).map(|i| heap(i * 300, "Listener", (1 << 20) + i * (200 << 10))).collect();
    let edge = |from: &str, to: &str, bytes: u64| EdgeVolume { from: from.into(), to: to.into(), bytes, references: 1 };
    let walk = |ms: u64, n: u64| HeapSummary {
        edges: vec![
            edge("java.lang.Object[]", "Listener", n * 32),
            edge("java.util.concurrent.CopyOnWriteArrayList", "java.lang.Object[]", n * 4),
        ],
        ..heap(ms, "Listener", n * 32)
    };
    let walks = [walk(100, 1_000), walk(900, 3_000)];
    let list = |id: u64, grows: bool| ContainerHolder {
        id,
        container: "java.util.concurrent.CopyOnWriteArrayList".into(),
        array: "java.lang.Object[]".into(),
        element: "Listener".into(),
        elements: 3_000,
        array_field: "array".into(),
        bytes: 12_000,
        path: vec!["Shop$PriceService".into(), "class Shop".into()],
        fields: vec!["listeners".into(), "PRICES".into()],
        time_ms: 1_000_900,
        sizes: (1..24).map(|i| (1_000_000 + i * 1_000, if grows { 12_000 + i * 6_000 } else { 12_000 })).collect(),
    };
    let o = Options::default().for_samples(64 << 10);
    let report = analyze_run(&samples, &walks, &[list(7, true), list(8, false)], &o, &[]);
    let s = report.candidates[0].slice.structure.as_ref().expect("a growing structure");
    assert_eq!(s.name, "Shop$PriceService.listeners");
    assert_eq!(s.path, ["Shop$PriceService.listeners", "class Shop.PRICES"]);
    assert_eq!((s.first_bytes, s.last_bytes), (12_000, 12_000 + 23 * 6_000));
    assert_eq!((s.element.as_deref(), s.elements), (Some("Listener"), 3_000));
    assert!(report.candidates[0]
        .slice
        .edges
        .iter()
        .any(|e| e.from == "Shop$PriceService" && e.field.as_deref() == Some("listeners")));
    assert!(s.seen_holding);
    // A list that stayed as the walk left it is no growing structure.
    let steady = analyze_run(&samples, &walks, &[list(8, false)], &o, &[]);
    assert!(steady.candidates[0].slice.structure.is_none());
    // Walks that ran before the leak began saw no edge to the list: the list that grew
    // over the same time is named, as not seen holding it.
    let before: Vec<HeapSummary> = [100, 900].iter().map(|&ms| heap(ms, "Listener", 0)).collect();
    let report = analyze_run(&samples, &before, &[list(7, true)], &o, &[]);
    let s = report.candidates[0].slice.structure.as_ref().expect("the list that grew");
    assert_eq!((s.name.as_str(), s.seen_holding), ("Shop$PriceService.listeners", false));
    assert_eq!(headline_candidates(&report)[0].held_by.as_deref(), Some("Shop$PriceService.listeners"));
    // No whole walk at all (the first stopped at its deadline): the list that walks filtered
    // by class found and followed is still the structure.
    let report = analyze_run(&samples, &[], &[list(7, true)], &o, &[]);
    let s = report.candidates[0].slice.structure.as_ref().expect("the list that grew");
    assert_eq!(s.name, "Shop$PriceService.listeners");
    // A list found by a walk filtered to its array's class, with nothing known of what holds
    // it: the structure is the list, and no holder is said.
    let unheld = ContainerHolder { path: vec!["…".into()], fields: Vec::new(), ..list(7, true) };
    let report = analyze_run(&samples, &walks, &[unheld], &o, &[]);
    let s = report.candidates[0].slice.structure.as_ref().expect("the list that grew");
    assert_eq!(s.name, "java.util.concurrent.CopyOnWriteArrayList");
    assert_eq!(headline_candidates(&report)[0].held_by, None);
}

#[test]
fn the_biggest_container_of_a_class_is_no_holder_unless_it_grew_with_the_slice() {
    // Reports pile up in one map while a catalog map, ten times as big, never changes (a Jetty
    // shop): the walks see the edges into Report grow, by class; which map holds them, only
    // the map whose table grew can say.
    let samples: Vec<HeapSummary> = (0..80u64).map(|i| heap(i * 300, "Report", (1 << 20) + i * (200 << 10))).collect();
    let edge = |from: &str, to: &str, bytes: u64| EdgeVolume { from: from.into(), to: to.into(), bytes, references: 1 };
    let walk = |ms: u64| {
        let bytes = (1 << 20) + ms / 300 * (200 << 10);
        HeapSummary {
            edges: vec![
                edge("java.util.HashMap$Node", "Report", bytes),
                edge("java.util.HashMap$Node[]", "java.util.HashMap$Node", bytes / 2),
                edge("java.util.HashMap", "java.util.HashMap$Node[]", bytes / 8),
            ],
            ..heap(ms, "Report", bytes)
        }
    };
    let walks = [walk(300), walk(12_000)];
    let map = |id: u64, owner: &str, sizes: Vec<(u64, u64)>| ContainerHolder {
        id,
        container: "java.util.HashMap".into(),
        array: "java.util.HashMap$Node[]".into(),
        element: "java.util.HashMap$Node".into(),
        elements: 1_000,
        array_field: "table".into(),
        bytes: sizes.last().map_or(0, |s| s.1),
        path: vec![owner.into(), "class Shop".into()],
        fields: vec!["map".into(), "INSTANCE".into()],
        time_ms: 0,
        sizes,
    };
    let catalog = map(1, "Shop$Catalog", vec![(1_001_000, 4 << 20), (1_020_000, 4 << 20)]);
    let reports = map(2, "Shop$Reports", vec![(1_001_000, 64 << 10), (1_020_000, 128 << 10)]);
    let o = Options::default().for_samples(64 << 10);
    let holders_of = |containers: &[ContainerHolder]| -> Vec<String> {
        let report = analyze_run(&samples, &walks, containers, &o, &[]);
        let c = &report.candidates[0];
        assert_eq!(c.class, "Report");
        assert!(c.slice.structure.is_none(), "{:?}", c.slice.structure);
        assert!(c.slice.containers.contains(&"java.util.HashMap".to_string()), "{:?}", c.slice);
        c.slice.edges.iter().filter(|e| e.growth_bytes == 0).map(|e| e.from.clone()).collect()
    };
    assert_eq!(holders_of(std::slice::from_ref(&catalog)), Vec::<String>::new());
    assert_eq!(holders_of(&[catalog.clone(), reports]), ["Shop$Reports", "class Shop"]);
    // A map that grew and then shrank below its peak is not still growing with the slice.
    let emptied = map(3, "Shop$Cache", vec![(1_001_000, 64 << 10), (1_010_000, 256 << 10), (1_020_000, 128 << 10)]);
    assert_eq!(holders_of(&[catalog, emptied]), Vec::<String>::new());
}

#[test]
fn a_walk_that_saw_little_of_a_candidate_names_no_holder_for_it() {
    // Sessions pile up for 24 s; the one walk ran at the start, when they were 1 KiB and a
    // startup class held the most of them (Tomcat on a loaded machine: 192 B then, 2 MiB later).
    let samples: Vec<HeapSummary> = (0..80u64).map(|i| heap(i * 300, "Session", 1024 + i * (200 << 10))).collect();
    let edge = |from: &str, bytes: u64| EdgeVolume { from: from.into(), to: "Session".into(), bytes, references: 1 };
    let early =
        HeapSummary { edges: vec![edge("StartupContext", 800), edge("Registry", 224)], ..heap(100, "Session", 1024) };
    let o = Options::default().for_samples(64 << 10);
    let report = analyze_run(&samples, std::slice::from_ref(&early), &[], &o, &[]);
    let c = &report.candidates[0];
    assert!(c.slice.edges.is_empty() && c.slice.containers.is_empty(), "{:?}", c.slice);
    assert!(c.slice.not_known.as_deref().is_some_and(|w| w.contains("1.0 KiB")), "{:?}", c.slice.not_known);
    assert!(report.notes.iter().any(|n| n.starts_with("what holds Session is not known yet")), "{:?}", report.notes);
    // The biggest container of its class, as that walk saw it, is no holder either.
    let map = ContainerHolder {
        id: 9,
        container: "Session".into(),
        array: "Session[]".into(),
        element: "Session".into(),
        elements: 4,
        array_field: "next".into(),
        bytes: 64,
        path: vec!["Startup".into(), "…".into()],
        fields: vec!["sessions".into()],
        time_ms: 1_000_100,
        sizes: vec![],
    };
    let report = analyze_run(&samples, std::slice::from_ref(&early), std::slice::from_ref(&map), &o, &[]);
    let c = &report.candidates[0];
    assert!(c.slice.edges.is_empty() && c.slice.not_known.is_some(), "{:?}", c.slice);
    // A walk later on, that saw most of what the samples give: its heaviest referrer is what
    // held it then, said as not seen growing (no growth on the edge).
    let late = HeapSummary {
        edges: vec![edge("Registry", 12 << 20), edge("StartupContext", 800)],
        ..heap(20_000, "Session", 12 << 20)
    };
    let report = analyze_run(&samples, &[late], &[], &o, &[]);
    let c = &report.candidates[0];
    assert_eq!(c.slice.not_known, None);
    let froms: Vec<(&str, u64)> = c.slice.edges.iter().map(|e| (e.from.as_str(), e.growth_bytes)).collect();
    assert_eq!(froms, [("Registry", 0)]);
}

#[test]
fn candidates_whose_holders_are_unknown_are_not_one_structure() {
    let mut c = vec![candidate("Session", None), candidate("byte[]", None)];
    crate::analyze::mark_same_structures(&mut c);
    assert!(c.iter().all(|c| c.same_structure_as.is_none()));
    c[0].slice.containers = vec!["Registry".into()];
    c[1].slice.containers = vec!["Registry".into()];
    crate::analyze::mark_same_structures(&mut c);
    assert_eq!(c[1].same_structure_as.as_deref(), Some("Session"));
}

/// Three dumps, a second apart, of the classes given with their bytes in each, beside a
/// steady 38 MiB of `Other`.
fn three(classes: &[(&str, [u64; 3])]) -> Vec<HeapSummary> {
    const OTHER: u64 = 38 << 20;
    (0..3)
        .map(|i| {
            let mut volumes: Vec<ClassVolume> = classes
                .iter()
                .map(|(name, b)| ClassVolume { name: name.to_string(), instances: b[i] / 32, bytes: b[i] })
                .collect();
            volumes.push(ClassVolume { name: "Other".into(), instances: 1000, bytes: OTHER });
            HeapSummary {
                source: format!("dump{}", i + 3),
                time_ms: Some(1_000_000 + i as u64 * 1_000),
                total_bytes: volumes.iter().map(|c| c.bytes).sum(),
                classes: volumes,
                ..Default::default()
            }
        })
        .collect()
}

#[test]
fn three_dumps_of_a_leak_under_way_name_it_where_the_ranking_cannot() {
    const MB: u64 = 1 << 20;
    // 60 k → 80 k → 100 k sessions of 32 B: Cork's rank is 83, under its threshold of 100.
    let heaps = three(&[("Session", [60_000 * 32, 80_000 * 32, 100_000 * 32])]);
    let explain = ["Session".to_string()];
    let r = crate::analyze(&heaps, &Options::default(), &explain);
    assert_eq!(r.candidates.iter().map(|c| c.class.as_str()).collect::<Vec<_>>(), ["Session"], "{:?}", r.explained);
    assert!((r.candidates[0].rank - 83.3).abs() < 0.1, "Cork's rank alone would pass it: {}", r.candidates[0].rank);
    assert!(r.notes.iter().any(|n| n.contains("3 heaps are fewer than the ranking needs")), "{:?}", r.notes);
    // The same series as published: Cork's ranking finds nothing.
    let cork = Options { method: crate::Method::Cork, ..Options::default() };
    assert!(crate::analyze(&heaps, &cork, &[]).candidates.is_empty());
    // Growth that slows to a trickle (a warm-up), or swings (a working set that rose by
    // chance, which Cork's rank passes at 318), is not a leak: steps under half of one another.
    for uneven in [[MB, 3 * MB, 3 * MB + 200_000], [517_336, 848_608, 1_926_016]] {
        let r = crate::analyze(&three(&[("Session", uneven)]), &Options::default(), &explain);
        assert!(r.candidates.is_empty(), "{uneven:?}: {:?}", r.candidates);
        assert!(r.explained[0].verdict.contains("uneven"), "{}", r.explained[0].verdict);
    }
    // Even growth too small for the heap (under 64 KiB) is not named.
    let small = crate::analyze(&three(&[("Session", [MB, MB + 20_000, MB + 40_000])]), &Options::default(), &explain);
    assert!(small.candidates.is_empty() && small.not_enough_data.is_none(), "{:?}", small.explained);
    assert!(small.explained[0].verdict.contains("significant"), "{}", small.explained[0].verdict);
}

#[test]
fn three_dumps_whose_heap_grows_by_nothing_named_are_not_a_verdict_of_no_leak() {
    const MB: u64 = 1 << 20;
    // The heap grew 2.5 then 4.1 MiB, in two classes that each grew unevenly: no candidate,
    // and no "nothing grows" either.
    let spread = three(&[("Session", [MB, 3 * MB, 3 * MB + 100 * 1024]), ("Buffer", [MB, 3 * MB / 2, 11 * MB / 2])]);
    let r = crate::analyze(&spread, &Options::default(), &[]);
    assert!(r.candidates.is_empty(), "{:?}", r.candidates);
    let why = r.not_enough_data.as_deref().expect("not enough data");
    assert!(why.contains("the live heap grew at every step (40.0 MiB → 42.5 MiB → 46.6 MiB)"), "{why}");
    // A heap that holds steady is a verdict.
    let steady = three(&[("Session", [MB, 3 * MB, 3 * MB + 100 * 1024]), ("Buffer", [3 * MB, MB, MB])]);
    let r = crate::analyze(&steady, &Options::default(), &[]);
    assert!(r.candidates.is_empty() && r.not_enough_data.is_none(), "{:?}", r.not_enough_data);
    // Seven heaps are judged as before, by the ranking, whatever the heap does.
    let seven: Vec<HeapSummary> = (0..7).map(|i| heap(i * 1_000, "Session", MB + i * (MB / 2))).collect();
    let r = crate::analyze(&seven, &Options::default(), &[]);
    assert!(r.not_enough_data.is_none() && !r.notes.iter().any(|n| n.contains("fewer than the ranking")));
}
