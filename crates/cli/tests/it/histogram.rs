//! `leakscope histogram` on heaps written by the test kit: JSON shape, grouping, text.

use hprof::RootKind;
use testkit::{HeapBuilder, Ty};

use crate::support::{leakscope, temp_dump};

fn sample() -> Vec<u8> {
    let mut h = HeapBuilder::new();
    let base = h.class("com.acme.cache.Entry", None, &[("key", Ty::Object), ("value", Ty::Object)]);
    let sub = h.class("com.acme.cache.TimedEntry", Some(base), &[("expires", Ty::Long)]);
    let other = h.class("org.other.Thing", None, &[("x", Ty::Int)]);
    for _ in 0..4 {
        h.instance(base);
    }
    for _ in 0..2 {
        h.instance(sub);
    }
    let t = h.instance(other);
    h.primitive_array(Ty::Byte, 10);
    h.root(RootKind::JniGlobal, t);
    h.build()
}

fn json(args: &[&str]) -> report::Histogram {
    let out = leakscope(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

fn row<'a>(h: &'a report::Histogram, name: &str) -> &'a report::HistogramRow {
    h.classes.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn by_class_counts_jvm_sizes() {
    let (_d, p) = temp_dump(&sample());
    let h = json(&["histogram", "--json", p.to_str().unwrap()]);
    // Entry: 12 + 4 + 4 = 20 -> 24; TimedEntry: 20 + 8 = 28 -> 32; byte[10]: 26 -> 32.
    assert_eq!((row(&h, "com.acme.cache.Entry").instances, row(&h, "com.acme.cache.Entry").shallow_bytes), (4, 96));
    assert_eq!(row(&h, "com.acme.cache.TimedEntry").shallow_bytes, 64);
    assert_eq!(row(&h, "byte[]").shallow_bytes, 32);
    assert_eq!(h.total_instances, h.classes.iter().map(|r| r.instances).sum::<u64>());
    let sizes: Vec<u64> = h.classes.iter().map(|r| r.shallow_bytes).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "biggest first");
}

#[test]
fn by_package_and_hierarchy() {
    let (_d, p) = temp_dump(&sample());
    let h = json(&["histogram", "--json", "--by", "package", p.to_str().unwrap()]);
    assert_eq!(row(&h, "com.acme.cache").instances, 6);
    assert_eq!(row(&h, "com.acme.cache").shallow_bytes, 96 + 64);
    assert_eq!(row(&h, "<no package>").instances, 1);
    let h = json(&["histogram", "--json", "--by", "hierarchy", p.to_str().unwrap()]);
    assert_eq!(row(&h, "com.acme.cache.Entry").instances, 6);
    assert_eq!(row(&h, "com.acme.cache.TimedEntry").instances, 2);
    assert_eq!(row(&h, "java.lang.Object").instances, h.total_instances);
}

#[test]
fn top_keeps_totals_of_everything() {
    let (_d, p) = temp_dump(&sample());
    let all = json(&["histogram", "--json", p.to_str().unwrap()]);
    let top = json(&["histogram", "--json", "--top", "1", p.to_str().unwrap()]);
    assert_eq!(top.classes.len(), 1);
    assert_eq!(top.classes[0], all.classes[0]);
    assert_eq!(top.total_shallow_bytes, all.total_shallow_bytes);
}

#[test]
fn text_output_is_a_table() {
    let (_d, p) = temp_dump(&sample());
    let out = leakscope(&["histogram", p.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("instances") && text.contains("com.acme.cache.Entry") && text.contains("total"), "{text}");
    assert!(text.contains("compressed oops"), "{text}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}
