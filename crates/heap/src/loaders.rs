//! One application loaded several times: class loaders that each define classes of the same
//! names (a webapp redeployed while something outside it still holds the old deployment).

use rustc_hash::FxHashMap;

use crate::classes::{ClassIdx, ClassTable};

/// Class names kept per group, for reports.
const MAX_NAMES: usize = 20;

/// Loaders of one class that define the same classes: copies of one application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoaderGroup {
    /// The loaders' class (`org.apache.catalina.loader.ParallelWebappClassLoader`).
    pub loader_class: String,
    /// The first class names the copies define, sorted (at most 20).
    pub classes: Vec<String>,
    /// How many classes one copy defines (the most any copy does).
    pub class_count: u64,
    /// The loader objects' ids, one per copy.
    pub loaders: Vec<u64>,
}

/// The groups of two or more live loaders of one class whose first defined class name (in
/// name order) is the same. `loader_class(id)` gives a loader object's class when the object
/// is in the dump and live.
pub fn loader_groups(classes: &ClassTable, loader_class: impl Fn(u64) -> Option<ClassIdx>) -> Vec<LoaderGroup> {
    let mut names: FxHashMap<u64, Vec<&str>> = FxHashMap::default();
    for (_, c) in classes.iter().filter(|(_, c)| c.loader_id != 0) {
        names.entry(c.loader_id).or_default().push(&c.name);
    }
    // (loader class, first class name) → (the loaders, the longest list of names one defines).
    type Copies<'a> = (Vec<u64>, Vec<&'a str>);
    let mut groups: FxHashMap<(ClassIdx, &str), Copies<'_>> = FxHashMap::default();
    for (loader, mut defined) in names {
        let Some(of) = loader_class(loader) else { continue };
        defined.sort_unstable();
        let g = groups.entry((of, defined[0])).or_default();
        g.0.push(loader);
        if defined.len() > g.1.len() {
            g.1 = defined;
        }
    }
    let mut out: Vec<LoaderGroup> = groups
        .into_iter()
        .filter(|(_, (loaders, _))| loaders.len() >= 2)
        .map(|((of, _), (mut loaders, defined))| {
            loaders.sort_unstable();
            LoaderGroup {
                loader_class: classes.get(of).name.clone(),
                classes: defined.iter().take(MAX_NAMES).map(|s| s.to_string()).collect(),
                class_count: defined.len() as u64,
                loaders,
            }
        })
        .collect();
    out.sort_by(|a, b| b.loaders.len().cmp(&a.loaders.len()).then(a.classes.cmp(&b.classes)));
    out
}
