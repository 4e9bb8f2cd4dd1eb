//! Selectors: which objects a question is about (`class:NAME`, `class:NAME+`, `id:0xADDR`,
//! `static:CLASS.FIELD`, `rule:A>B>C`), as documented in docs/architecture.md.

use std::str::FromStr;

use heap::{ClassIdx, ObjIdx, RefStrength, Snapshot, Value};

use crate::retention::retention_roots;

/// A parsed selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Instances of one class (`class:NAME`), or of it and its subclasses (`class:NAME+`).
    Class {
        /// Java name, such as `java.util.HashMap`.
        name: String,
        /// Include subclasses.
        subclasses: bool,
    },
    /// One object by address (`id:0x7f3a10`).
    Id(u64),
    /// The object a static field holds (`static:com.example.Cache.INSTANCE`).
    Static {
        /// Java name of the declaring class.
        class: String,
        /// Field name.
        field: String,
    },
    /// A reference rule (`rule:A>B>C`): objects of class C reached from a GC root along a
    /// path whose class names contain A, then B, as a subsequence (two-phase thesis, §3.2).
    Rule(Vec<String>),
}

/// Why a selector cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// The text is not a selector.
    #[error("{0:?} is not a selector; use class:NAME, class:NAME+, id:0xADDR, static:CLASS.FIELD or rule:A>B>C")]
    Syntax(String),
    /// No class of that name.
    #[error("no class {name} in the dump{}", hint(.similar))]
    NoClass {
        /// The name asked for.
        name: String,
        /// Classes with the same simple name, or else whose names contain it (ignoring case).
        similar: Vec<String>,
    },
    /// No object at that address.
    #[error("no object at address 0x{0:x} in the dump")]
    NoObject(u64),
    /// The class has no such static reference field.
    #[error("class {class} has no static reference field {field}{}", hint(.available))]
    NoStatic {
        /// The class.
        class: String,
        /// The field asked for.
        field: String,
        /// Its static reference fields.
        available: Vec<String>,
    },
}

fn hint(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", names.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
    }
}

impl FromStr for Selector {
    type Err = SelectError;

    fn from_str(text: &str) -> Result<Selector, SelectError> {
        let err = || SelectError::Syntax(text.to_owned());
        let (kind, arg) = text.split_once(':').ok_or_else(err)?;
        let arg = arg.trim();
        if arg.is_empty() {
            return Err(err());
        }
        Ok(match kind {
            "class" => match arg.strip_suffix('+') {
                Some(name) => Selector::Class { name: name.to_owned(), subclasses: true },
                None => Selector::Class { name: arg.to_owned(), subclasses: false },
            },
            "id" if arg.starts_with("0x") || arg.starts_with("0X") => {
                Selector::Id(arg.parse::<report::ObjectId>().map_err(|_| err())?.0)
            }
            "id" => return Err(err()),
            "static" => {
                let (class, field) = arg.rsplit_once('.').ok_or_else(err)?;
                Selector::Static { class: class.to_owned(), field: field.to_owned() }
            }
            "rule" => Selector::Rule(heap::names::parse_rule(arg).ok_or_else(err)?),
            _ => return Err(err()),
        })
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Class { name, subclasses } => write!(f, "class:{name}{}", if *subclasses { "+" } else { "" }),
            Selector::Id(a) => write!(f, "id:0x{a:x}"),
            Selector::Static { class, field } => write!(f, "static:{class}.{field}"),
            Selector::Rule(parts) => write!(f, "rule:{}", parts.join(">")),
        }
    }
}

impl Selector {
    /// The selected objects, in index order.
    pub fn select(&self, s: &Snapshot) -> Result<Vec<ObjIdx>, SelectError> {
        match self {
            Selector::Class { name, subclasses } => {
                let classes = classes_named(s, name)?;
                let wanted = class_mask(s, |c| classes.iter().any(|&k| in_hierarchy(s, c, k, *subclasses)));
                Ok(s.objects().filter(|&o| wanted[s.class_of(o).index()]).collect())
            }
            Selector::Id(addr) => s.find(*addr).map(|o| vec![o]).ok_or(SelectError::NoObject(*addr)),
            Selector::Static { class, field } => select_static(s, class, field),
            Selector::Rule(parts) => {
                // A rule naming no class of the heap selects nothing: say so, as for class:.
                if let Some(p) = parts.iter().find(|p| !s.classes().iter().any(|(_, c)| matches(p, &c.name))) {
                    return Err(SelectError::NoClass { name: p.clone(), similar: near(s, p) });
                }
                Ok(select_rule(s, parts))
            }
        }
    }
}

fn in_hierarchy(s: &Snapshot, c: ClassIdx, k: ClassIdx, subclasses: bool) -> bool {
    if subclasses {
        s.classes().chain(c).any(|a| a == k)
    } else {
        c == k
    }
}

fn class_mask(s: &Snapshot, f: impl Fn(ClassIdx) -> bool) -> Vec<bool> {
    s.classes().iter().map(|(i, _)| f(i)).collect()
}

fn classes_named(s: &Snapshot, name: &str) -> Result<Vec<ClassIdx>, SelectError> {
    let found: Vec<ClassIdx> = s.classes().find_all(name).collect();
    if !found.is_empty() {
        return Ok(found);
    }
    let simple = name.rsplit('.').next().unwrap_or(name);
    let mut similar: Vec<String> =
        s.classes().iter().filter(|(_, c)| matches(simple, &c.name)).map(|(_, c)| c.name.clone()).collect();
    similar.sort();
    similar.dedup();
    // A short name that names one class (`StandardSession`), as `rule:` accepts it.
    if let [only] = &similar[..] {
        return Ok(s.classes().find_all(only).collect());
    }
    if similar.is_empty() {
        similar = near(s, simple);
    }
    Err(SelectError::NoClass { name: name.to_owned(), similar })
}

/// Suggestions for a class name that matches none: see [`suggestions`].
fn near(s: &Snapshot, name: &str) -> Vec<String> {
    suggestions(s.classes().iter().map(|(_, c)| c.name.as_str()), name)
}

/// Class names a person may have meant by `name`, likeliest first (at most 8): those whose
/// simple name is it or starts a word with it (`Session` for `UserSession`, ignoring case),
/// then those a typo or two away. A name inside a word is no suggestion: `Nope` is not in
/// `ChronoPeriod` or `MBeanOperationInfo` for a person, though their letters contain it.
fn suggestions<'a>(names: impl Iterator<Item = &'a str>, name: &str) -> Vec<String> {
    let lower = name.to_lowercase();
    let typos = (lower.chars().count() / 4).max(1);
    let mut scored: Vec<(usize, &str)> = names
        .filter_map(|full| {
            let simple = full.rsplit('.').next().unwrap_or(full);
            let simple_lower = simple.to_lowercase();
            if simple_lower == lower {
                return Some((0, full));
            }
            let starts_word = simple.char_indices().any(|(i, c)| {
                let boundary = i == 0 || c.is_uppercase() || matches!(simple[..i].chars().last(), Some('$' | '_'));
                boundary && simple_lower.get(i..).is_some_and(|rest| rest.starts_with(&lower))
            });
            if starts_word {
                return Some((1, full));
            }
            let d = edit_distance(&simple_lower, &lower);
            (d <= typos).then_some((1 + d, full))
        })
        .collect();
    scored.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    for (_, n) in scored {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_owned());
        }
        if out.len() == 8 {
            break;
        }
    }
    out
}

/// Levenshtein distance between two short names, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

use heap::names::rule_element_matches as matches;

fn select_static(s: &Snapshot, class: &str, field: &str) -> Result<Vec<ObjIdx>, SelectError> {
    let classes = classes_named(s, class)?;
    let mut available = Vec::new();
    for c in classes {
        for st in &s.classes().get(c).statics {
            if let Value::Object(id) = st.value {
                if st.name == field {
                    return Ok(s.find(id).into_iter().collect());
                }
                available.push(st.name.clone());
            }
        }
    }
    Err(SelectError::NoStatic { class: class.to_owned(), field: field.to_owned(), available })
}

/// The product search of the reference rule: per object, the most rule elements (before the
/// last) that some strong path from a root has matched on arrival. Matching earlier never
/// hurts, so the best count per object is enough, and each object is re-entered at most once
/// per element.
fn select_rule(s: &Snapshot, parts: &[String]) -> Vec<ObjIdx> {
    let (last, prefix) = parts.split_last().expect("a rule has at least one element");
    let m = prefix.len().min(250) as u8;
    let step: Vec<Vec<bool>> = prefix.iter().map(|p| class_mask(s, |c| matches(p, &s.classes().get(c).name))).collect();
    let is_last = class_mask(s, |c| matches(last, &s.classes().get(c).name));
    const UNSEEN: u8 = u8::MAX;
    let mut arrival = vec![UNSEEN; s.object_count() as usize];
    let mut stack: Vec<ObjIdx> = Vec::new();
    let arrive = |o: ObjIdx, a: u8, arrival: &mut Vec<u8>, stack: &mut Vec<ObjIdx>| {
        if arrival[o.index()] == UNSEEN || a > arrival[o.index()] {
            arrival[o.index()] = a;
            stack.push(o);
        }
    };
    for r in retention_roots(s) {
        arrive(r, 0, &mut arrival, &mut stack);
    }
    while let Some(o) = stack.pop() {
        let a = arrival[o.index()];
        let c = s.class_of(o).index();
        let out = if a < m && step[a as usize][c] { a + 1 } else { a };
        for e in s.edges(o) {
            if e.strength == RefStrength::Strong {
                arrive(e.target, out, &mut arrival, &mut stack);
            }
        }
    }
    s.objects().filter(|o| arrival[o.index()] == m && is_last[s.class_of(*o).index()]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_names_a_person_may_have_meant() {
        let names = [
            "java.time.chrono.ChronoPeriod",
            "javax.management.MBeanOperationInfo",
            "com.shop.UserSession",
            "org.apache.catalina.session.StandardSession",
            "com.shop.Sesion",
            "com.shop.Cart$Line",
        ];
        let near = |name: &str| suggestions(names.iter().copied(), name);
        assert_eq!(near("Nope"), Vec::<String>::new(), "letters inside a word are no suggestion");
        assert_eq!(
            near("session"),
            ["com.shop.UserSession", "org.apache.catalina.session.StandardSession", "com.shop.Sesion"],
            "words first, then a typo away"
        );
        assert_eq!(near("Line"), ["com.shop.Cart$Line"]);
        assert_eq!(near("ChronoPeriodd"), ["java.time.chrono.ChronoPeriod"]);
    }

    #[test]
    fn parses_and_prints() {
        for text in [
            "class:java.util.HashMap",
            "class:java.util.AbstractMap+",
            "id:0x7f3a10",
            "static:com.example.Cache.INSTANCE",
            "rule:A>B>String",
        ] {
            assert_eq!(text.parse::<Selector>().unwrap().to_string(), text);
        }
        assert_eq!("id:0X10".parse::<Selector>().unwrap(), Selector::Id(16));
        assert!(matches("Inner", "com.acme.Outer$Inner") && matches("Outer$Inner", "com.acme.Outer$Inner"));
        assert!(matches("byte[]", "byte[]") && !matches("Outer", "com.acme.Outer$Inner"));
        for bad in ["", "class:", "klass:Foo", "id:123", "id:0xzz", "static:NoDot", "rule:A>>B"] {
            assert!(matches!(bad.parse::<Selector>(), Err(SelectError::Syntax(_))), "{bad}");
        }
    }
}
