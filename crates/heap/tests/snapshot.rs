//! The census and the snapshot on heaps written by the test kit.

use graph::NoProgress;
use heap::{Census, Dump, EdgeLabel, ObjIdx, ReadOptions, RefStrength, RootDetail, Snapshot, VmLayout, WarningKind};
use hprof::{IdSize, RootKind};
use testkit::{HeapBuilder, Ty};

fn census(bytes: Vec<u8>) -> Census {
    Census::build(&Dump::from_vec(bytes), &ReadOptions::default(), &NoProgress).expect("census")
}

fn snapshot(bytes: Vec<u8>) -> Snapshot {
    Snapshot::build(Dump::from_vec(bytes), &ReadOptions::default(), &NoProgress).expect("snapshot")
}

fn totals(c: &Census, name: &str) -> (u64, u64) {
    let i = c.classes.find(name).unwrap_or_else(|| panic!("no class {name}"));
    let t = c.of(i);
    (t.instances, t.shallow_bytes)
}

#[test]
fn census_counts_instances_and_jvm_sizes() {
    let mut h = HeapBuilder::new();
    let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("value", Ty::Int)]);
    let big = h.class("com.example.Big", Some(node), &[("a", Ty::Long), ("b", Ty::Byte)]);
    for _ in 0..10 {
        h.instance(node);
    }
    h.instance(big);
    h.primitive_array(Ty::Byte, 5);
    h.primitive_array(Ty::Byte, 17);
    h.object_array("[Ljava/lang/Object;", &[None, None, None]);
    let c = census(h.build());
    // Node: 12 header + 4 ref + 4 int = 20 -> 24. Big: 20 + 8 + 1 = 29 -> 32.
    assert_eq!(totals(&c, "com.example.Node"), (10, 240));
    assert_eq!(totals(&c, "com.example.Big"), (1, 32));
    // byte[5]: 16 + 5 -> 24; byte[17]: 16 + 17 -> 40. Object[3]: 16 + 12 -> 32.
    assert_eq!(totals(&c, "byte[]"), (2, 64));
    assert_eq!(totals(&c, "java.lang.Object[]"), (1, 32));
    assert_eq!(c.layout, VmLayout::DEFAULT_64);
}

#[test]
fn injected_fields_and_contended_padding_are_seen_through_gaps() {
    let mut h = HeapBuilder::new();
    let member = h.class("java.lang.invoke.MemberName", None, &[("clazz", Ty::Object), ("name", Ty::Object)]);
    h.hidden_bytes(member, 8);
    let thread = h.class("java.lang.Thread", None, &[("name", Ty::Object)]);
    h.hidden_bytes(thread, 256);
    let sub = h.class("com.example.Worker", Some(thread), &[]);
    let filler = h.class("com.example.Filler", None, &[]);
    for _ in 0..3 {
        h.instance(member);
        h.instance(thread);
        h.instance(filler);
    }
    // The only Worker sits at the end of a region: no usable gap, it inherits Thread's padding.
    h.instance(sub);
    h.gap(4096);
    h.primitive_array(Ty::Int, 1);
    let c = census(h.build());
    assert_eq!(totals(&c, "java.lang.invoke.MemberName"), (3, 3 * 32));
    assert_eq!(totals(&c, "java.lang.Thread"), (3, 3 * 272));
    assert_eq!(totals(&c, "com.example.Worker"), (1, 272));
}

#[test]
fn uncompressed_oops_are_inferred() {
    let layout = VmLayout { header_bytes: 16, ref_bytes: 8, array_base_small: 24, array_base_large: 24, align: 8 };
    let mut h = HeapBuilder::with_layout(IdSize::Eight, layout);
    let node = h.class("Node", None, &[("next", Ty::Object)]);
    for i in 0..20 {
        h.instance(node);
        h.object_array("[Ljava/lang/Object;", &vec![None; i]);
        h.primitive_array(Ty::Int, i as u32);
    }
    let c = census(h.build());
    assert_eq!(c.layout, layout);
    assert_eq!(totals(&c, "Node"), (20, 20 * 24));
}

#[test]
fn four_byte_ids_read() {
    let mut h = HeapBuilder::with_layout(IdSize::Four, VmLayout::DEFAULT_32);
    let node = h.class("Node", None, &[("next", Ty::Object)]);
    let a = h.instance(node);
    let b = h.instance(node);
    h.set(a, "next", b);
    h.root(RootKind::JniGlobal, a);
    let s = snapshot(h.build());
    assert_eq!(s.census.header.id_size, IdSize::Four);
    let a = s.find(a.0).unwrap();
    assert_eq!(s.edges(a).map(|e| s.address(e.target)).collect::<Vec<_>>(), vec![b.0]);
    assert_eq!(s.shallow_bytes(a), 16);
}

#[test]
fn snapshot_edges_labels_and_referent_strength() {
    let mut h = HeapBuilder::new();
    let reference = h.class("java.lang.ref.Reference", None, &[("referent", Ty::Object), ("queue", Ty::Object)]);
    let weak = h.class("java.lang.ref.WeakReference", Some(reference), &[]);
    let entry = h.class("java.util.WeakHashMap$Entry", Some(weak), &[("value", Ty::Object), ("next", Ty::Object)]);
    let key = h.instance(h.object_class());
    let value = h.instance(h.object_class());
    let e = h.instance(entry);
    h.set(e, "referent", key);
    h.set(e, "value", value);
    let arr = h.object_array("[Ljava/lang/Object;", &[None, Some(e), Some(value)]);
    let holder = h.class("com.example.Holder", None, &[]);
    h.static_ref(holder, "cache", Some(arr));
    h.sticky_class(holder);
    let s = snapshot(h.build());

    let e_idx = s.find(e.0).unwrap();
    let edges: Vec<_> = s.edges(e_idx).collect();
    assert_eq!(edges.len(), 2);
    assert_eq!((s.address(edges[0].target), edges[0].strength), (key.0, RefStrength::Weak));
    assert_eq!((s.address(edges[1].target), edges[1].strength), (value.0, RefStrength::Strong));
    let labels: Vec<String> = s.labeled_edges(e_idx).iter().map(|(l, _)| s.label_name(e_idx, *l)).collect();
    assert_eq!(labels, vec!["referent", "value"]);

    let a_idx = s.find(arr.0).unwrap();
    let labeled = s.labeled_edges(a_idx);
    assert_eq!(labeled.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![EdgeLabel::Element(1), EdgeLabel::Element(2)]);

    let mirror = s.find(h.class_id(holder)).unwrap();
    assert_eq!(s.mirror_class(mirror).map(|c| s.classes().get(c).name.as_str()), Some("com.example.Holder"));
    let statics: Vec<String> = s.labeled_edges(mirror).iter().map(|(l, _)| s.label_name(mirror, *l)).collect();
    assert_eq!(statics, vec!["static cache", "<super>"]);
    let holder_idx = s.classes().find("com.example.Holder").unwrap();
    assert_eq!(s.static_refs(), vec![(holder_idx, 0, a_idx)]);
    assert_eq!(s.classes().get(holder_idx).statics[0].name, "cache");
    assert_eq!(s.roots.len(), 1);
    assert_eq!(s.roots[0].object, mirror);
}

#[test]
fn objects_are_dense_and_sorted_by_address() {
    let mut h = HeapBuilder::new();
    let c = h.class("C", None, &[("x", Ty::Int)]);
    let objs: Vec<_> = (0..50).map(|_| h.instance(c)).collect();
    h.segment_bytes(200);
    let s = snapshot(h.build());
    let addrs: Vec<u64> = s.objects().map(|o| s.address(o)).collect();
    assert!(addrs.windows(2).all(|w| w[0] < w[1]));
    for o in objs {
        let i = s.find(o.0).unwrap();
        assert_eq!(s.shallow_bytes(i), h.size_of(o));
        assert_eq!(s.classes().get(s.class_of(i)).name, "C");
    }
    assert_eq!(s.find(1), None);
    assert_eq!(s.object_count(), 50 + s.classes().iter().filter(|(_, c)| c.dump_offset.is_some()).count() as u64);
}

#[test]
fn thread_roots_carry_thread_and_frame() {
    let mut h = HeapBuilder::new();
    let thread_class = h.class("java.lang.Thread", None, &[]);
    let main = h.class("com.example.Main", None, &[]);
    let t = h.thread(
        thread_class,
        &[("com.example.Main", "work", "Main.java", 42), ("com.example.Main", "main", "Main.java", 7)],
    );
    let local = h.instance(main);
    h.frame_root(t, 1, local);
    let s = snapshot(h.build());
    assert_eq!(s.threads.len(), 1);
    let frames = &s.threads[0].frames;
    assert_eq!((frames[0].method.as_str(), frames[0].line), ("work", Some(42)));
    assert_eq!(frames[1].class, "com.example.Main");
    let root = s.roots.iter().find(|r| r.kind == RootKind::JavaFrame).unwrap();
    assert_eq!(root.object, s.find(local.0).unwrap());
    assert_eq!(root.detail, RootDetail::Thread { thread: 0, frame: Some(1) });
    assert_eq!(s.threads[0].object, s.find(t.object.0));
}

#[test]
fn threads_are_named_from_their_objects_and_virtual_threads_known() {
    let mut h = HeapBuilder::new();
    let thread_class = h.class("java.lang.Thread", None, &[("name", Ty::Object), ("tid", Ty::Long)]);
    let base = h.class("java.lang.BaseVirtualThread", Some(thread_class), &[]);
    let virtual_class = h.class("java.lang.VirtualThread", Some(base), &[]);
    let platform = h.thread(thread_class, &[("A", "run", "A.java", 1)]);
    let named = h.thread(virtual_class, &[("B", "run", "B.java", 1)]);
    let unnamed = h.thread(virtual_class, &[("C", "run", "C.java", 1)]);
    for (t, name) in [(platform, "http-nio-8080-exec-3"), (named, "vt-named")] {
        let n = h.string_object(name);
        h.set(t.object, "name", n);
    }
    h.set_prim(unnamed.object, "tid", 24);
    let s = snapshot(h.build());
    let who: Vec<_> = (0..3).map(|t| s.thread_identity(t)).collect();
    assert_eq!((who[0].name.as_deref(), who[0].is_virtual), (Some("http-nio-8080-exec-3"), false));
    assert_eq!((who[1].name.as_deref(), who[1].is_virtual), (Some("vt-named"), true));
    assert_eq!((who[2].name.as_deref(), who[2].tid, who[2].is_virtual), (None, Some(24), true));
}

#[test]
fn dangling_references_and_roots_become_counted_warnings() {
    let mut h = HeapBuilder::new();
    let node = h.class("Node", None, &[("next", Ty::Object)]);
    let a = h.instance(node);
    h.set(a, "next", testkit::ObjRef(0xdead_0000));
    h.root_id(RootKind::JniGlobal, 0xbeef_0000);
    h.root(RootKind::JniGlobal, a);
    let s = snapshot(h.build());
    assert_eq!(s.edges(ObjIdx(s.find(a.0).unwrap().0)).count(), 0);
    assert_eq!(s.census.warnings.count(WarningKind::DanglingReference), 1);
    assert_eq!(s.census.warnings.count(WarningKind::DanglingRoot), 1);
    assert_eq!(s.roots.len(), 1);
}

#[test]
fn repeated_load_class_records_keep_the_first_name() {
    let mut h = HeapBuilder::new();
    let c = h.class("First", None, &[]);
    h.instance(c);
    let mut bytes = h.build();
    // JDK 17 writes several LOAD_CLASS records for one class id; append one naming a new string.
    let mut tail = hprof::Writer::new(IdSize::Eight);
    let mut body = hprof::Writer::new(IdSize::Eight);
    body.id(0x5555_0000);
    body.bytes(b"Second");
    hprof::write_record(&mut tail, hprof::tag::UTF8, &body.buf);
    let mut body = hprof::Writer::new(IdSize::Eight);
    hprof::layout::LoadClass { serial: 99, class_id: h.class_id(c), stack_serial: 0, name_id: 0x5555_0000 }
        .write(&mut body);
    hprof::write_record(&mut tail, hprof::tag::LOAD_CLASS, &body.buf);
    bytes.extend_from_slice(&tail.buf);
    let c = census(bytes);
    assert_eq!(totals(&c, "First"), (1, 16));
    assert!(c.classes.find("Second").is_none());
}

#[test]
fn unsegmented_dumps_and_other_versions_read() {
    for version in [hprof::Version::V101, hprof::Version::V102, hprof::Version::V103] {
        let mut h = HeapBuilder::new();
        let c = h.class("com.example.Old", None, &[("x", Ty::Long)]);
        for _ in 0..5 {
            h.instance(c);
        }
        h.version(version).unsegmented();
        let bytes = h.build();
        let census = census(bytes.clone());
        assert_eq!(census.header.version, version);
        assert_eq!(totals(&census, "com.example.Old"), (5, 5 * 24));
        // One HEAP DUMP record needs no HEAP DUMP END: not a truncation.
        assert!(census.warnings.is_empty(), "{:?}", census.warnings);
        assert_eq!(snapshot(bytes).object_count(), 5 + 2);
    }
}

#[test]
fn objects_of_512_kib_and_more_and_heaps_of_over_65536_classes_keep_exact_facts() {
    // The snapshot keeps classes and sizes in 2 bytes each while they fit: past that, the
    // classes take 4 bytes and the sizes are listed aside.
    let mut h = HeapBuilder::new();
    let classes: Vec<_> = (0..70_000).map(|i| h.class(&format!("com.example.C{i}"), None, &[("x", Ty::Int)])).collect();
    let mut objects = vec![h.primitive_array(Ty::Byte, 5)];
    for len in [(512 << 10) - 16, 512 << 10, 3 << 20, 40 << 20] {
        objects.push(h.primitive_array(Ty::Byte, len));
        objects.push(h.instance(classes[(len % 70_000) as usize]));
    }
    objects.push(h.instance(classes[69_999]));
    let s = snapshot(h.build());
    for &o in &objects {
        let i = s.find(o.0).unwrap();
        assert_eq!(s.shallow_bytes(i), h.size_of(o), "object {:#x}", o.0);
    }
    let last = s.find(objects.last().unwrap().0).unwrap();
    assert_eq!(s.classes().get(s.class_of(last)).name, "com.example.C69999");
}
