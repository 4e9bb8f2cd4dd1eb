//! Android dumps written by the test kit as ART writes them: HPROF 1.0.3, heaps named by
//! HEAP DUMP INFO, and each class's embedded storage as a `byte[]` pseudo-array.

use graph::NoProgress;
use heap::layout::{AndroidRuntime, LayoutBasis};
use heap::{Census, Dump, ReadOptions, Snapshot, VmLayout, WarningKind};
use hprof::{IdSize, Version};
use testkit::{HeapBuilder, ObjRef, Ty};

/// A heap of two classes with overhead arrays, sessions and byte arrays in the zygote and
/// app heaps, cut into small segments that do not repeat the heap's name.
struct Art {
    bytes: Vec<u8>,
    builder: HeapBuilder,
    session_class: u64,
    zygote: Vec<ObjRef>,
    app: Vec<ObjRef>,
}

fn art() -> Art {
    let mut h = HeapBuilder::with_layout(IdSize::Four, VmLayout::ART);
    h.version(Version::V103).segment_bytes(200);
    h.class("java.lang.Class", None, &[("name", Ty::Object), ("flags", Ty::Int), ("size", Ty::Int)]);
    let session = h.class("com.example.Session", None, &[("id", Ty::Object), ("hits", Ty::Int)]);
    let registry = h.class("com.example.Registry", None, &[]);
    h.class_overhead(session, 200);
    h.class_overhead(registry, 60);
    let (mut zygote, mut app) = (Vec::new(), Vec::new());
    h.heap(u32::from(b'Z'), "zygote");
    for _ in 0..10 {
        zygote.push(h.instance(session));
    }
    for _ in 0..3 {
        zygote.push(h.primitive_array(Ty::Byte, 100));
    }
    h.heap(u32::from(b'A'), "app");
    for _ in 0..50 {
        app.push(h.instance(session));
    }
    for _ in 0..20 {
        app.push(h.primitive_array(Ty::Byte, 30));
    }
    let held: Vec<Option<ObjRef>> = app.iter().copied().map(Some).collect();
    let all = h.object_array("[Lcom/example/Session;", &held);
    app.push(all);
    h.static_ref(registry, "sessions", Some(all));
    Art { bytes: h.build(), session_class: h.class_id(session), builder: h, zygote, app }
}

fn census(bytes: &[u8]) -> Census {
    Census::build(&Dump::from_vec(bytes.to_vec()), &ReadOptions::default(), &NoProgress).expect("census")
}

/// Objects and bytes of `objs` as the test kit laid them out (address gaps, not declarations).
fn laid_out(h: &HeapBuilder, objs: &[ObjRef]) -> (u64, u64) {
    (objs.len() as u64, objs.iter().map(|&o| h.size_of(o)).sum())
}

fn total(c: &Census) -> (u64, u64) {
    let t = c.total();
    (t.instances, t.shallow_bytes)
}

#[test]
fn overhead_arrays_are_the_class_objects_own_size_not_byte_arrays() {
    let a = art();
    let c = census(&a.bytes);
    assert_eq!(c.layout_basis, LayoutBasis::Android(AndroidRuntime::Art));
    assert_eq!(c.layout, VmLayout::ART);
    let bytes = c.classes.find("byte[]").unwrap();
    assert_eq!(c.of(bytes).instances, 23, "3 + 20 arrays; the 2 overhead arrays are not program data");
    let session = c.classes.by_id(a.session_class).unwrap();
    assert_eq!(c.classes.get(session).embedded_bytes, 200);
    // Sessions are sized as declared (8 header + 4 + 4 = 16), which is how ART lays them out.
    assert_eq!(c.of(session).shallow_bytes, 60 * a.builder.size_of(a.app[0]));
    let class_class = c.classes.find("java.lang.Class").unwrap();
    let classes_with_records = c.classes.iter().filter(|(_, k)| k.dump_offset.is_some()).count() as u64;
    assert_eq!(c.of(class_class).instances, classes_with_records);

    let s = Snapshot::build(Dump::from_vec(a.bytes.clone()), &ReadOptions::default(), &NoProgress).unwrap();
    assert!(s.find(a.session_class + 1).is_none(), "no object for the pseudo-array");
    assert_eq!(s.census.warnings.count(WarningKind::DanglingReference), 0, "{:?}", s.census.warnings);
    let statics: Vec<String> = s
        .static_refs()
        .into_iter()
        .map(|(class, field, _)| s.classes().get(class).statics[field as usize].name.clone())
        .collect();
    assert_eq!(statics, ["sessions"], "$classOverhead is no reference");
    let mirror = (0..s.object_count()).map(heap::ObjIdx).find(|&o| s.mirror_class(o) == Some(session)).unwrap();
    // The class object: java.lang.Class's 8 + 4 + 4 + 4 = 20 bytes, plus the 200 embedded.
    assert_eq!(s.shallow_bytes(mirror), VmLayout::ART.align_up(20 + 200));
}

#[test]
fn heaps_are_counted_apart_and_carried_across_segments() {
    let a = art();
    let mut c = census(&a.bytes);
    let names: Vec<&str> = c.heaps.iter().map(|h| h.name.as_str()).collect();
    // Class records come before any HEAP DUMP INFO: ART calls that heap "default".
    assert_eq!(names, ["default", "app", "zygote"]);
    let heap = |c: &Census, name: &str| {
        let t = c.heaps.iter().find(|h| h.name == name).unwrap().total();
        (t.instances, t.shallow_bytes)
    };
    assert_eq!(heap(&c, "zygote"), laid_out(&a.builder, &a.zygote));
    assert_eq!(heap(&c, "app"), laid_out(&a.builder, &a.app));
    let all = total(&c);
    let sum = c.heaps.iter().map(|h| h.total()).fold((0, 0), |s, t| (s.0 + t.instances, s.1 + t.shallow_bytes));
    assert_eq!(sum, all);
    c.select_heap("app").unwrap();
    assert_eq!(total(&c), laid_out(&a.builder, &a.app));
    assert!(c.select_heap("image").unwrap_err().contains("default, app, zygote, or all"));
}
