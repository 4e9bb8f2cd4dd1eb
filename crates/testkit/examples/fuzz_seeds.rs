//! Writes small HPROF files as a seed corpus for `fuzz/` (usage: `cargo run -p leakscope-testkit
//! --example fuzz_seeds -- DIR`).

use hprof::{IdSize, RootKind};
use testkit::{HeapBuilder, Ty};

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus/snapshot".into());
    std::fs::create_dir_all(&dir)?;
    for (name, id_size, layout) in
        [("ids8", IdSize::Eight, heap::VmLayout::DEFAULT_64), ("ids4", IdSize::Four, heap::VmLayout::DEFAULT_32)]
    {
        let mut h = HeapBuilder::with_layout(id_size, layout);
        let reference = h.class("java.lang.ref.Reference", None, &[("referent", Ty::Object)]);
        let weak = h.class("java.lang.ref.WeakReference", Some(reference), &[]);
        let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("v", Ty::Long), ("b", Ty::Byte)]);
        let thread_class = h.class("java.lang.Thread", None, &[("name", Ty::Object)]);
        let t = h.thread(thread_class, &[("com.example.Node", "run", "Node.java", 3)]);
        let a = h.instance(node);
        let b = h.instance(node);
        h.set(a, "next", b);
        h.set(b, "next", a);
        let w = h.instance(weak);
        h.set(w, "referent", a);
        let arr = h.object_array("[Lcom/example/Node;", &[Some(a), None, Some(b)]);
        h.primitive_array(Ty::Char, 3);
        h.static_ref(node, "ALL", Some(arr));
        h.static_prim(node, "COUNT", Ty::Int, 2);
        h.sticky_class(node);
        h.frame_root(t, 0, w);
        h.root(RootKind::JniGlobal, b);
        h.segment_bytes(128);
        std::fs::write(format!("{dir}/{name}.hprof"), h.build())?;
    }
    Ok(())
}
