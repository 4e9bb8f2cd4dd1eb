//! Containers the agent's walks saw and what holds them: joined to a slice as its holder
//! chain, and a growing structure told from its container's growth.

use crate::names;

/// A container object seen by the agent's walk (it references a big array) and what holds
/// it, from the container outwards.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ContainerHolder {
    /// The agent's number for the container object, the same in every walk and reading of it
    /// (0 in stores written before containers were numbered).
    pub id: u64,
    /// Class of the container.
    pub container: String,
    /// Class of its big array.
    pub array: String,
    /// The class most of the array's elements had, and how many had it, when the walk
    /// counted them (empty, 0 when not).
    pub element: String,
    /// See `element`.
    pub elements: u64,
    /// The container's field that holds the array, when known.
    pub array_field: String,
    /// Bytes of its big array.
    pub bytes: u64,
    /// Holders outwards: class names, `class NAME` for static fields, `root KIND`, `…`.
    pub path: Vec<String>,
    /// For each holder of `path`, its field that holds the step before it (`[]` for an array's
    /// element), or empty when not known.
    pub fields: Vec<String>,
    /// When the walk that last saw the chain ran, milliseconds since the Unix epoch (0 when not known).
    pub time_ms: u64,
    /// The array's bytes as read between walks without a pause, or at each walk on a forked
    /// copy: (time, bytes), oldest first.
    pub sizes: Vec<(u64, u64)>,
}

impl ContainerHolder {
    /// A holder of the path as people name it: `Class.field` (`class Class.FIELD` for a static
    /// field), or the class alone when the field is not known.
    pub fn holder_name(&self, i: usize) -> String {
        match (self.path.get(i), self.fields.get(i).filter(|f| !f.is_empty() && f.as_str() != "[]")) {
            (Some(class), Some(field)) => format!("{class}.{field}"),
            (Some(class), None) => class.clone(),
            (None, _) => String::new(),
        }
    }
}

/// Adds to `slice` what holds each of its containers: the chain of the container object of
/// that class whose array grew most over the ranked snapshots (from `from_ms` on), as
/// non-growing edges (`growth_bytes` 0). The slice is by class, so only a container that grew
/// with it is evidence of holding it: the biggest one of its class is not (on Jetty the
/// catalog's `HashMap`, never changed, was said to hold the reports kept in another map).
fn add_container_holders(slice: &mut report::Slice, holders: &[ContainerHolder], from_ms: u64) {
    for container in slice.containers.clone() {
        // The container class itself, or the big array a container object holds.
        let grew = |h: &ContainerHolder| {
            let r = readings(h, from_ms);
            let (first, last) = (r.first().map_or(0, |r| r.1), r.last().map_or(0, |r| r.1));
            (last > first && r.iter().all(|&(_, b)| b <= last)).then_some(last - first)
        };
        let Some(h) = holders
            .iter()
            .filter(|h| h.container == container || h.array == container)
            .filter_map(|h| Some((h, grew(h)?)))
            .max_by_key(|(_, g)| *g)
            .map(|(h, _)| h)
        else {
            continue;
        };
        add_chain(slice, h, &container);
    }
}

/// Adds the chain of container `h` to `slice` as non-growing edges, from `start` (its
/// container's class, or its array's) outwards, each with the field that holds the step
/// before (an edge the slice has already, a growing one, is left as it is).
fn add_chain(slice: &mut report::Slice, h: &ContainerHolder, start: &str) {
    let mut steps: Vec<(String, Option<String>)> = Vec::new();
    if h.array == start && h.container != start {
        steps.push((h.container.clone(), Some(h.array_field.clone()).filter(|f| !f.is_empty())));
    }
    steps.extend(
        h.path
            .iter()
            .zip(h.fields.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(class, field)| (class.clone(), field.filter(|f| !f.is_empty()).cloned())),
    );
    let mut to = start.to_string();
    for (from, field) in steps {
        if let Some(e) = slice.edges.iter_mut().find(|e| e.from == from && e.to == to) {
            e.field = e.field.take().or(field);
            to = from;
            continue;
        }
        slice.edges.push(report::SliceEdge {
            from: from.clone(),
            to: to.clone(),
            bytes: h.bytes,
            growth_bytes: 0,
            field,
        });
        if !slice.classes.contains(&from) {
            slice.classes.push(from.clone());
        }
        to = from;
    }
}

/// A container whose array grew over the ranked snapshots (from `from_ms` on), read between
/// heap walks: by at least a quarter and [`MIN_STRUCTURE_GROWTH`] bytes, at
/// [`MIN_STRUCTURE_STEPS`] readings or more, and still at its largest when last read. The
/// walks' own sizes count as readings.
fn growth_of(h: &ContainerHolder, from_ms: u64) -> Option<(u64, u64, u64, u64)> {
    let readings = readings(h, from_ms);
    let (&(first_ms, first), &(last_ms, last)) = (readings.first()?, readings.last()?);
    let peak = readings.iter().map(|r| r.1).max().unwrap_or(0);
    let steps = readings.windows(2).filter(|w| w[1].1 > w[0].1).count();
    let grew =
        last >= first + MIN_STRUCTURE_GROWTH && last * 4 >= first * 5 && last == peak && steps >= MIN_STRUCTURE_STEPS;
    grew.then_some((first, last, first_ms, last_ms))
}

/// The sizes of `h`'s array from `from_ms` on, as (time, bytes), oldest first: those read
/// between walks and the last walk's own.
fn readings(h: &ContainerHolder, from_ms: u64) -> Vec<(u64, u64)> {
    let mut readings: Vec<(u64, u64)> = h.sizes.iter().copied().filter(|&(t, _)| t >= from_ms).collect();
    if h.time_ms >= from_ms && h.time_ms > 0 {
        readings.push((h.time_ms, h.bytes));
        readings.sort_unstable();
    }
    readings
}

/// A container's array must grow by this much to be a growing structure: a list's array
/// grows four bytes an element, so a thousand leaked listeners.
const MIN_STRUCTURE_GROWTH: u64 = 4096;
/// A growing structure's array grew at this many readings at least: a map's table that
/// doubled once while classes loaded (the application class loader's `parallelLockMap`, 4 to
/// 8 KiB in the first seconds) is no leak; a leaking map's table doubles again and again, a
/// list's array grows at every addition.
const MIN_STRUCTURE_STEPS: usize = 3;

/// The growing structure of a candidate's slice: among the containers that grew (see
/// [`growth_of`]), the one whose array or own class the slice holds, most growth first; else
/// the one that grew most, not seen holding it.
fn structure_of<'h>(
    slice: &report::Slice,
    holders: &'h [ContainerHolder],
    from_ms: u64,
) -> Option<(&'h ContainerHolder, report::HeldStructure)> {
    let growing = || holders.iter().filter_map(|h| Some((h, growth_of(h, from_ms)?)));
    let in_slice = |h: &ContainerHolder| slice.classes.iter().any(|c| *c == h.array || *c == h.container);
    let most = |a: &(&ContainerHolder, (u64, u64, u64, u64)), b: &(&ContainerHolder, (u64, u64, u64, u64))| {
        (a.1 .1 - a.1 .0).cmp(&(b.1 .1 - b.1 .0))
    };
    // One the slice holds; else the one that grew most over the same time, said as such (the
    // walks that linked classes ran before the leak began: the slice is of another heap).
    let linked = growing().filter(|(h, _)| in_slice(h)).max_by(most);
    let seen = linked.is_some();
    let (h, (first, last, first_ms, last_ms)) = linked.or_else(|| growing().max_by(most))?;
    let path: Vec<String> = (0..h.path.len()).map(|i| h.holder_name(i)).collect();
    let steps: Vec<names::Step<'_>> = h
        .path
        .iter()
        .zip(h.fields.iter().map(String::as_str).chain(std::iter::repeat("")))
        .take_while(|(class, _)| class.as_str() != "…")
        .map(|(class, field)| names::Step { owner: if class.starts_with("root ") { "" } else { class }, field })
        .collect();
    let name = names::person_name(&steps);
    Some((
        h,
        report::HeldStructure {
            name: name.as_ref().map_or_else(|| h.container.clone(), |n| n.name.clone()),
            library: name.as_ref().and_then(|n| n.library.clone()),
            known_as: name.as_ref().and_then(|n| n.known_as).map(str::to_string),
            seen_holding: seen,
            class: h.container.clone(),
            element: Some(h.element.clone()).filter(|e| !e.is_empty()),
            elements: h.elements,
            array_field: h.array_field.clone(),
            array: h.array.clone(),
            path,
            first_bytes: first,
            last_bytes: last,
            first_ms,
            last_ms,
            walked_ms: h.time_ms,
        },
    ))
}

/// Gives `slice` its growing structure, when a container read between walks grew where
/// it holds the candidate, with the chain that holds it; else the chains of its containers.
pub(crate) fn hold(slice: &mut report::Slice, holders: &[ContainerHolder], from_ms: u64) {
    let Some((h, structure)) = structure_of(slice, holders, from_ms) else {
        add_container_holders(slice, holders, from_ms);
        return;
    };
    if structure.seen_holding {
        let start = if slice.classes.contains(&h.array) { h.array.clone() } else { h.container.clone() };
        add_chain(slice, h, &start);
    }
    slice.containers = vec![structure.class.clone()];
    slice.structure = Some(structure);
}
