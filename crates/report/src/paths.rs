//! The `paths` report: shortest paths from GC roots, merged by shape.

use serde::{Deserialize, Serialize};

/// The root a path starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathRoot {
    /// Root kind: `java frame`, `system class`, `jni global`, `thread`, `class held by the VM`, ...
    pub kind: String,
    /// Thread and frame, class, or reference id.
    pub detail: String,
    /// The root in plain words, naming its kind once: `JNI global reference`,
    /// `local variable of thread "main", frame 2: App.run(App.java:12)`, `system class`.
    #[serde(default)]
    pub label: String,
}

impl PathRoot {
    /// The root in plain words: its label, or its kind and detail in models saved before
    /// labels existed.
    pub fn plain(&self) -> String {
        match (self.label.is_empty(), self.detail.is_empty()) {
            (false, _) => self.label.clone(),
            (true, true) => self.kind.clone(),
            (true, false) => format!("{}: {}", self.kind, self.detail),
        }
    }
}

/// One object on a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathStep {
    /// Address, as `0x…`.
    pub id: crate::ObjectId,
    /// Class name (for a class mirror: `class NAME`).
    pub class: String,
    /// The previous object's field that holds this one; null for the root object.
    pub field: Option<String>,
    /// True for a class loader's own bookkeeping between the loader and a class it defines
    /// (its `classes` list and that list's array): the readable path leaves it out and shows
    /// the class as defined by the loader.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub folded: bool,
}

/// A path, standing for `count` objects whose paths have the same shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathEntry {
    /// Where it starts.
    pub root: PathRoot,
    /// Root object first, the selected object last.
    pub steps: Vec<PathStep>,
    /// Selected objects with this root, classes and fields (array indices aside).
    pub count: u64,
    /// The path as text and the UI show it ([`readable`]): its first line, then the steps
    /// after it.
    #[serde(default)]
    pub readable: ReadablePath,
}

/// A path as people read it ([`readable`]): the root object and how it is rooted on one
/// line, then one step per line, each with the field that holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadablePath {
    /// The first line: the root object, or the last class defined along the path, and how it
    /// is held.
    pub from: String,
    /// The steps after it, each with the field that holds it.
    pub steps: Vec<PathStep>,
}

impl PathEntry {
    /// A path entry with its readable form filled in.
    pub fn new(root: PathRoot, steps: Vec<PathStep>, count: u64) -> PathEntry {
        let readable = readable(&root.plain(), &steps);
        PathEntry { root, steps, count, readable }
    }
}

/// What a JVM's paths never go through, as the text says it.
pub const PATHS_WEAK_NOTE: &str = "Paths do not go through weak, soft, phantom or final referents.";

/// What a V8 snapshot's paths never go through.
pub const V8_PATHS_WEAK_NOTE: &str = "Paths do not go through weak references (as in DevTools).";

/// The `paths` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathsReport {
    /// The selector.
    pub selector: String,
    /// Objects selected.
    pub selected: u64,
    /// Merged paths, most common first.
    pub paths: Vec<PathEntry>,
    /// Selected objects no strong path reaches (garbage, or only weakly reachable).
    pub unreachable: u64,
    /// Path shapes left out by `--max`.
    pub more_shapes: bool,
}

/// The readable form of a path from `root` (its plain label) along `steps` (root object
/// first). A class loader's bookkeeping ([`PathStep::folded`]) is left out, and when the path
/// goes through a class its loader defines, the last such class heads the path with its
/// loader and how the loader is held, so that a static field of an application class reads
/// `class X, defined by LOADER (JNI global reference)` then `static f -> ...`.
pub fn readable(root: &str, steps: &[PathStep]) -> ReadablePath {
    let root = if root.is_empty() { "unknown root" } else { root };
    let Some(first) = steps.first() else {
        return ReadablePath { from: root.to_owned(), steps: Vec::new() };
    };
    let defined = (1..steps.len()).rev().find(|&k| steps[k - 1].folded && !steps[k].folded);
    let (from, rest) = match defined {
        None => (format!("{} {} ({root})", first.class, first.id), 1),
        Some(k) => {
            let loader = (0..k).rev().find(|&j| !steps[j].folded).unwrap_or(0);
            let how = if loader == 0 {
                root.to_owned()
            } else {
                let mut chain = vec![first.class.clone()];
                let mut after_fold = false;
                for s in &steps[1..=loader] {
                    if !s.folded {
                        chain.push(if after_fold { s.class.clone() } else { s.field.clone().unwrap_or_default() });
                    }
                    after_fold = s.folded;
                }
                format!("{root}: {}", chain.join(" → "))
            };
            let (class, by) = (&steps[k], &steps[loader]);
            (format!("{} {}, defined by {} {} ({how})", class.class, class.id, by.class, by.id), k + 1)
        }
    };
    let steps = steps[rest..]
        .iter()
        .map(|s| PathStep { field: Some(s.field.clone().unwrap_or_default()), ..s.clone() })
        .collect();
    ReadablePath { from, steps }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(class: &str, id: u64, field: Option<&str>, folded: bool) -> PathStep {
        PathStep { id: crate::ObjectId(id), class: class.into(), field: field.map(Into::into), folded }
    }

    #[test]
    fn a_static_of_an_application_class_reads_as_the_class_and_the_field() {
        let steps = [
            step("AppClassLoader", 1, None, false),
            step("java.util.ArrayList", 2, Some("classes"), true),
            step("java.lang.Object[]", 3, Some("elementData"), true),
            step("class Audit", 4, Some("[460]"), false),
            step("java.util.HashMap", 5, Some("static LOG"), false),
        ];
        let r = readable("JNI global reference", &steps);
        assert_eq!(r.from, "class Audit 0x4, defined by AppClassLoader 0x1 (JNI global reference)");
        assert_eq!(r.steps.len(), 1);
        assert_eq!(r.steps[0].field.as_deref(), Some("static LOG"));
        let plain = [step("java.lang.Thread", 1, None, false), step("Task", 2, Some("target"), false)];
        let r = readable("thread \"main\"", &plain);
        assert_eq!(r.from, "java.lang.Thread 0x1 (thread \"main\")");
        assert_eq!(r.steps.len(), 1);
    }

    #[test]
    fn a_class_whose_loader_is_deep_in_the_path_heads_it_with_how_the_loader_is_held() {
        let steps = [
            step("class Bindings", 1, None, false),
            step("WebappClassLoader", 2, Some("static loader"), false),
            step("java.util.ArrayList", 3, Some("classes"), true),
            step("java.lang.Object[]", 4, Some("elementData"), true),
            step("class Servlet", 5, Some("[2]"), false),
            step("java.util.HashMap", 6, Some("static CACHE"), false),
        ];
        let r = readable("system class", &steps);
        assert_eq!(
            r.from,
            "class Servlet 0x5, defined by WebappClassLoader 0x2 (system class: class Bindings → static loader)"
        );
        let fields: Vec<&str> = r.steps.iter().filter_map(|s| s.field.as_deref()).collect();
        assert_eq!(fields, ["static CACHE"]);
    }
}
