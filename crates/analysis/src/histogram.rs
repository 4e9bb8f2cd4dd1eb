//! Instance counts and shallow bytes grouped by class, package or type hierarchy
//! (the Modula-3 tools' heap report by type and by type hierarchy; MAT's histogram).

use std::collections::BTreeMap;

use heap::{Census, ClassTotals};
use report::{Histogram, HistogramRow};

/// How histogram rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// One row per class.
    #[default]
    Class,
    /// One row per Java package (arrays count in their element's package; primitive
    /// arrays and the default package in `<no package>`).
    Package,
    /// One row per class, counting the class and all its subclasses.
    Hierarchy,
}

/// Label of the package row for classes without a package.
pub const NO_PACKAGE: &str = "<no package>";

/// The package row a class belongs to: its Java package, or [`NO_PACKAGE`].
pub fn package_label(class_name: &str) -> &str {
    match heap::names::package_of(class_name) {
        "" => NO_PACKAGE,
        p => p,
    }
}

/// Groups the census, biggest shallow bytes first; totals cover every object.
pub fn histogram(census: &Census, by: GroupBy) -> Histogram {
    let classes = &census.classes;
    let rows: Vec<HistogramRow> = match by {
        GroupBy::Class => classes.iter().map(|(i, c)| row(c.name.clone(), census.of(i))).collect(),
        GroupBy::Package => {
            let mut acc: BTreeMap<&str, ClassTotals> = BTreeMap::new();
            for (i, c) in classes.iter() {
                add(acc.entry(package_label(&c.name)).or_default(), census.of(i));
            }
            acc.into_iter().map(|(p, t)| row(p.to_owned(), t)).collect()
        }
        GroupBy::Hierarchy => {
            let mut acc = vec![ClassTotals::default(); classes.len()];
            for (i, _) in classes.iter() {
                let own = census.of(i);
                if own.instances > 0 {
                    for ancestor in classes.chain(i) {
                        add(&mut acc[ancestor.index()], own);
                    }
                }
            }
            classes.iter().map(|(i, c)| row(c.name.clone(), acc[i.index()])).collect()
        }
    };
    let total = census.total();
    let mut classes: Vec<HistogramRow> = rows.into_iter().filter(|r| r.instances > 0).collect();
    classes.sort_by(|a, b| {
        (b.shallow_bytes, b.instances).cmp(&(a.shallow_bytes, a.instances)).then_with(|| a.name.cmp(&b.name))
    });
    Histogram {
        classes,
        total_instances: total.instances,
        total_shallow_bytes: total.shallow_bytes,
        ..Default::default()
    }
}

fn row(name: String, t: ClassTotals) -> HistogramRow {
    HistogramRow { name, instances: t.instances, shallow_bytes: t.shallow_bytes }
}

fn add(into: &mut ClassTotals, t: ClassTotals) {
    into.instances += t.instances;
    into.shallow_bytes += t.shallow_bytes;
}

/// Android: each heap of the dump (app, zygote, image) with its totals; empty for other dumps.
pub fn heaps(census: &Census) -> Vec<report::HeapEntry> {
    census
        .heaps
        .iter()
        .map(|h| {
            let t = h.total();
            report::HeapEntry { name: h.name.clone(), instances: t.instances, shallow_bytes: t.shallow_bytes }
        })
        .collect()
}
