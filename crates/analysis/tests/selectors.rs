//! Selectors on heaps written by the test kit, including the two-phase thesis' worked example.

use analysis::{SelectError, Selector};
use graph::NoProgress;
use heap::{Dump, Snapshot};
use hprof::RootKind;
use testkit::{HeapBuilder, ObjRef, Ty};

fn snapshot(h: &HeapBuilder) -> Snapshot {
    Snapshot::build(Dump::from_vec(h.build()), &Default::default(), &NoProgress).unwrap()
}

fn select(s: &Snapshot, sel: &str) -> Vec<u64> {
    sel.parse::<Selector>().unwrap().select(s).unwrap().into_iter().map(|o| s.address(o)).collect()
}

/// Figure 3.3 of the thesis, rebuilt from the reference paths §3.2 lists:
/// a→b, a→d, d→b, b→c1, b→str1, c1→str2, d→c2, c2→str3; obj_a is the root.
fn thesis_heap() -> (HeapBuilder, [ObjRef; 8]) {
    let mut h = HeapBuilder::new();
    let f = [("r1", Ty::Object), ("r2", Ty::Object)];
    let string = h.class("java.lang.String", None, &[("value", Ty::Object)]);
    let [ca, cb, cc, cd] = ["Class_A", "Class_B", "Class_C", "Class_D"].map(|n| h.class(n, None, &f));
    let (a, b, c1, c2, d) = (h.instance(ca), h.instance(cb), h.instance(cc), h.instance(cc), h.instance(cd));
    let (s1, s2, s3) = (h.instance(string), h.instance(string), h.instance(string));
    for (from, field, to) in [
        (a, "r1", b),
        (a, "r2", d),
        (d, "r1", b),
        (b, "r1", c1),
        (b, "r2", s1),
        (c1, "r1", s2),
        (d, "r2", c2),
        (c2, "r1", s3),
    ] {
        h.set(from, field, to);
    }
    h.root(RootKind::JniGlobal, a);
    (h, [a, b, c1, c2, d, s1, s2, s3])
}

#[test]
fn thesis_reference_rules() {
    let (h, [.., s1, s2, s3]) = thesis_heap();
    let s = snapshot(&h);
    // r1 = (Class_B, String) selects str1 and str2; r2 = (Class_D, Class_C, String) selects str2 and str3.
    assert_eq!(select(&s, "rule:Class_B>String"), vec![s1.0, s2.0]);
    assert_eq!(select(&s, "rule:Class_D>Class_C>String"), vec![s2.0, s3.0]);
    assert_eq!(select(&s, "rule:Class_D>Class_C>java.lang.String"), vec![s2.0, s3.0]);
    assert_eq!(select(&s, "rule:String"), vec![s1.0, s2.0, s3.0]);
    assert_eq!(select(&s, "rule:Class_C>Class_B>String"), Vec::<u64>::new(), "order matters");
}

#[test]
fn class_id_and_static_selectors() {
    let mut h = HeapBuilder::new();
    let base = h.class("com.example.Base", None, &[]);
    let sub = h.class("com.example.Sub", Some(base), &[]);
    let (b, x) = (h.instance(base), h.instance(sub));
    let cache = h.class("com.example.Cache", None, &[]);
    h.static_ref(cache, "INSTANCE", Some(x));
    let s = snapshot(&h);
    assert_eq!(select(&s, "class:com.example.Base"), vec![b.0]);
    assert_eq!(select(&s, "class:com.example.Base+"), vec![b.0, x.0]);
    assert_eq!(select(&s, &format!("id:0x{:x}", x.0)), vec![x.0]);
    assert_eq!(select(&s, "static:com.example.Cache.INSTANCE"), vec![x.0]);

    // A short name that names one class selects it, as rule: elements do.
    assert_eq!(select(&s, "class:Base"), vec![b.0]);
    let err = |sel: &str| sel.parse::<Selector>().unwrap().select(&s).unwrap_err();
    // One that names two is ambiguous: both are suggested.
    let mut h2 = HeapBuilder::new();
    let (a1, a2) = (h2.class("com.example.Base", None, &[]), h2.class("org.other.Base", None, &[]));
    let _ = (h2.instance(a1), h2.instance(a2));
    let s2 = snapshot(&h2);
    let e = "class:Base".parse::<Selector>().unwrap().select(&s2).unwrap_err();
    assert!(matches!(e, SelectError::NoClass { ref similar, .. } if similar.len() == 2), "{e}");
    assert!(e.to_string().contains("did you mean com.example.Base, org.other.Base"), "{e}");
    assert!(err("class:base").to_string().contains("did you mean com.example.Base"));
    assert!(matches!(err("id:0x1"), SelectError::NoObject(1)));
    assert!(err("static:com.example.Cache.MISSING").to_string().contains("did you mean INSTANCE"));
}
