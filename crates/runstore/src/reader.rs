//! Reading a run store back: one row type and one function per table, and [`read`], which
//! assembles them into a [`Run`]. The store is opened read-only and read in one transaction,
//! so a reader sees whole snapshots while the agent goes on writing.

use std::collections::BTreeMap;
use std::path::Path;

use growth::{ClassVolume, ContainerHolder, EdgeVolume, HeapSummary};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row};
use rustc_hash::FxHashMap;

use crate::{err, schema, split_path, StoreError, SCHEMA_VERSION};

/// What a snapshot row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotKind {
    /// Estimated live volumes per class and allocation site, from allocation samples.
    Sample,
    /// A heap walk: exact volumes and the class points-from graph.
    Walk,
    /// A walk filtered by class: the holders of containers it learned, no class graph.
    Probe,
}

/// What checked a sampled snapshot's estimate of the live volumes. Samples stop counting
/// when the collector reports their objects freed, so an estimate also counts what died
/// since the last collection, and what died in a generation that collection did not visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Checked {
    /// Nothing: taken between collections (an idle JVM, or a collector that reports none).
    #[default]
    Nothing,
    /// A collection that had just ended, whose frees were applied: still counts dead objects
    /// in generations it did not collect.
    Collection,
    /// A heap walk: counts only objects the walk reached from the GC roots.
    Walk,
}

impl Checked {
    /// The value of the store's `checked` column.
    pub fn column(self) -> i64 {
        match self {
            Checked::Nothing => 0,
            Checked::Walk => 1,
            Checked::Collection => 2,
        }
    }

    /// From the store's `checked` column (unknown values check nothing).
    pub fn from_column(v: i64) -> Checked {
        match v {
            1 => Checked::Walk,
            2 => Checked::Collection,
            _ => Checked::Nothing,
        }
    }

    /// How a snapshot so checked is named in outputs.
    pub fn label(self) -> &'static str {
        match self {
            Checked::Nothing => "sampled",
            Checked::Collection => "sampled after gc",
            Checked::Walk => "walk-checked",
        }
    }
}

/// A row of `snapshots`.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRow {
    /// Its id, which the per-snapshot tables refer to.
    pub id: i64,
    /// Sample or walk.
    pub kind: SnapshotKind,
    /// When, ms since the epoch.
    pub time_ms: u64,
    /// Garbage collections before it.
    pub gc_count: u64,
    /// Live bytes over all classes.
    pub total_bytes: u64,
    /// Live objects over all classes.
    pub total_instances: u64,
    /// Walks: how long it stopped the JVM.
    pub pause_ms: Option<f64>,
    /// Samples: what checked the estimate.
    pub checked: Checked,
}

/// A row of `class_volumes`, with the class named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassVolumeRow {
    /// Class name.
    pub class: String,
    /// Live objects.
    pub instances: u64,
    /// Live bytes.
    pub bytes: u64,
    /// Samples: bytes allocated since the agent started.
    pub allocated_bytes: u64,
}

/// A row of `edges`: bytes of `to` objects referenced from `from` objects (`class NAME` for a
/// class's statics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRow {
    /// Referrer class, or `class NAME` for statics.
    pub from: String,
    /// Referent class.
    pub to: String,
    /// Referent bytes.
    pub bytes: u64,
    /// References.
    pub references: u64,
}

/// A row of `holders`: a container of a big array and what holds it.
pub type HolderRow = ContainerHolder;

/// An allocation site of a class and its estimated volumes at one sampled snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteRow {
    /// Class allocated.
    pub class: String,
    /// Frames, innermost first (`Class.method(File.java:line)`).
    pub frames: Vec<String>,
    /// Estimated live bytes.
    pub live_bytes: u64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: u64,
}

/// A watched object (`--watch`) and its last use, as the agent last wrote it (a row of `watched`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedObject {
    /// Its class.
    pub class: String,
    /// What holds it, outwards (the nearest holder first), as far as the walks have followed:
    /// classes, `class C` for static fields, `root KIND`, `…` when unfinished.
    pub holders: Vec<String>,
    /// When a walk first tagged it, ms since the epoch.
    pub tagged_ms: u64,
    /// Its last use since then, ms since the epoch.
    pub last_ms: Option<u64>,
    /// The frame that used it last (`Class.method(File.java:line)`).
    pub location: Option<String>,
    /// Collected since.
    pub freed: bool,
    /// Per entry of `holders`, the field of that holder through which it holds the object
    /// before it (`[]` for an array's element, empty where not known); `a|b` when the watched
    /// objects of one class path are held through different fields. Empty before schema 6.
    pub fields: Vec<String>,
}

/// The fields of each step of one path as several watched objects give them, merged step for
/// step into [`WatchedObject::fields`]' form: a step held through different fields in
/// different objects is `a|b` (sorted), one no object named is empty.
#[derive(Debug, Clone, Default)]
pub struct FieldsSeen(Vec<Vec<String>>);

impl FieldsSeen {
    /// Adds one object's fields along the path, entry for entry (each empty or `a|b` itself).
    pub fn add(&mut self, fields: &[String]) {
        if self.0.len() < fields.len() {
            self.0.resize(fields.len(), Vec::new());
        }
        for (seen, field) in self.0.iter_mut().zip(fields) {
            for f in field.split('|').filter(|f| !f.is_empty()) {
                if !seen.iter().any(|s| s == f) {
                    seen.push(f.to_string());
                }
            }
        }
    }

    /// The merged fields, `len` entries (those no object gave are empty).
    pub fn merged(self, len: usize) -> Vec<String> {
        let mut steps = self.0;
        steps.resize(len, Vec::new());
        steps
            .into_iter()
            .map(|mut names| {
                names.sort();
                names.join("|")
            })
            .collect()
    }
}

/// An object the program declared dead (`LeakScope.expectDead`), as the agent last saw it
/// (a row of `expectations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredExpectation {
    /// Its class.
    pub class: String,
    /// Where `expectDead` was called.
    pub site: String,
    /// When, ms since the epoch.
    pub at_ms: u64,
    /// Collected since.
    pub freed: bool,
    /// When a walk last looked (not freed by then), ms since the epoch.
    pub checked_ms: Option<u64>,
    /// Whether that walk reached it.
    pub reached: bool,
    /// What referenced it in that walk.
    pub held_by: Vec<String>,
}

/// A live heap dump the agent took when a candidate was confirmed (a row of `captures`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// When, ms since the epoch.
    pub time_ms: u64,
    /// The dump: a file in the store's directory.
    pub path: std::path::PathBuf,
    /// The live heap's bytes when it was taken, as the agent knew them.
    pub live_bytes: u64,
    /// Why: the candidate that was confirmed.
    pub reason: String,
}

/// Everything a run store holds, read back.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// `meta` entries: pid, main class, JVM, options, agent status.
    pub meta: BTreeMap<String, String>,
    /// Sampled snapshots (estimated live volumes per class, no edges), oldest first.
    pub samples: Vec<HeapSummary>,
    /// What checked each of `samples`.
    pub checked: Vec<Checked>,
    /// Estimated bytes allocated per class up to each sampled snapshot.
    pub allocated: Vec<FxHashMap<String, u64>>,
    /// Walks (class points-from graphs), oldest first.
    pub walks: Vec<HeapSummary>,
    /// How long each walk stopped the JVM, milliseconds.
    pub pauses_ms: Vec<f64>,
    /// Containers of big arrays in the last walk, or walk filtered by class, and the chains of
    /// what holds them.
    pub holders: Vec<HolderRow>,
    /// Allocation sites at the last sampled snapshot, most live bytes first.
    pub sites: Vec<SiteRow>,
    /// Messages the agent left, oldest first.
    pub events: Vec<String>,
    /// Objects declared dead with `LeakScope.expectDead`, in call order.
    pub expectations: Vec<StoredExpectation>,
    /// Objects watched for staleness (`--watch`).
    pub watched: Vec<WatchedObject>,
    /// Heap dumps taken on a confirmed candidate (`capture_on_leak`), oldest first.
    pub captures: Vec<Capture>,
}

/// One store, open read-only, inside one read transaction.
struct Reader<'c> {
    conn: &'c Connection,
    path: &'c str,
    names: FxHashMap<i64, String>,
    version: i64,
}

/// SQLite stores integers signed; counts and times are never negative.
fn u(r: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, i64>(i)?.max(0) as u64)
}

impl Reader<'_> {
    fn rows<T>(
        &self,
        sql: &str,
        p: impl rusqlite::Params,
        f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut q = self.conn.prepare_cached(sql).map_err(err(self.path))?;
        let rows = q.query_map(p, f).map_err(err(self.path))?;
        rows.collect::<Result<_, _>>().map_err(err(self.path))
    }

    fn name(&self, id: i64) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| format!("(class #{id})"))
    }

    fn meta(&self) -> Result<BTreeMap<String, String>, StoreError> {
        Ok(self.rows("SELECT key, value FROM meta", [], |r| Ok((r.get(0)?, r.get(1)?)))?.into_iter().collect())
    }

    fn snapshots(&self) -> Result<Vec<SnapshotRow>, StoreError> {
        // Version 3 renamed `clean` (0 or 1, which mean the same in `checked`).
        let column = if self.version >= 3 { "checked" } else { "clean" };
        self.rows(
            &format!(
                "SELECT id, kind, time_ms, gc_count, total_bytes, total_instances, pause_ms, {column} FROM snapshots ORDER BY id"
            ),
            [],
            |r| {
                Ok(SnapshotRow {
                    id: r.get(0)?,
                    kind: match r.get::<_, String>(1)?.as_str() {
                        "walk" => SnapshotKind::Walk,
                        "probe" => SnapshotKind::Probe,
                        _ => SnapshotKind::Sample,
                    },
                    time_ms: u(r, 2)?,
                    gc_count: u(r, 3)?,
                    total_bytes: u(r, 4)?,
                    total_instances: u(r, 5)?,
                    pause_ms: r.get(6)?,
                    checked: Checked::from_column(r.get(7)?),
                })
            },
        )
    }

    fn class_volumes(&self, snapshot: i64) -> Result<Vec<ClassVolumeRow>, StoreError> {
        let raw = self.rows(
            "SELECT class, instances, bytes, allocated_bytes FROM class_volumes WHERE snapshot = ?1",
            params![snapshot],
            |r| Ok((r.get::<_, i64>(0)?, u(r, 1)?, u(r, 2)?, u(r, 3)?)),
        )?;
        Ok(raw
            .into_iter()
            .map(|(c, instances, bytes, allocated_bytes)| ClassVolumeRow {
                class: self.name(c),
                instances,
                bytes,
                allocated_bytes,
            })
            .collect())
    }

    fn edges(&self, snapshot: i64) -> Result<Vec<EdgeRow>, StoreError> {
        let raw = self.rows(
            "SELECT from_class, statics, to_class, bytes, refs FROM edges WHERE snapshot = ?1",
            params![snapshot],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? != 0, r.get::<_, i64>(2)?, u(r, 3)?, u(r, 4)?)),
        )?;
        Ok(raw
            .into_iter()
            .map(|(from, statics, to, bytes, references)| EdgeRow {
                from: if statics { growth::statics_of(&self.name(from)) } else { self.name(from) },
                to: self.name(to),
                bytes,
                references,
            })
            .collect())
    }

    fn holders(&self, walk: &SnapshotRow) -> Result<Vec<HolderRow>, StoreError> {
        let numbered = self.version >= 5;
        let sql = if numbered {
            "SELECT container, array, bytes, path, container_id, array_field, fields, element, elements FROM holders WHERE snapshot = ?1 ORDER BY bytes DESC"
        } else {
            "SELECT container, array, bytes, path, 0, '', '', '', 0 FROM holders WHERE snapshot = ?1 ORDER BY bytes DESC"
        };
        let mut rows = self.rows(sql, params![walk.id], |r| {
            let path = split_path(&r.get::<_, String>(3)?);
            let fields: String = r.get(6)?;
            let mut fields = if fields.is_empty() { Vec::new() } else { split_path(&fields) };
            fields.resize(path.len(), String::new());
            Ok(ContainerHolder {
                id: u(r, 4)?,
                container: r.get(0)?,
                array: r.get(1)?,
                element: r.get(7)?,
                elements: u(r, 8)?,
                array_field: r.get(5)?,
                bytes: u(r, 2)?,
                path,
                fields,
                time_ms: walk.time_ms,
                sizes: Vec::new(),
            })
        })?;
        if numbered {
            for h in rows.iter_mut().filter(|h| h.id > 0) {
                h.sizes = self.rows(
                    "SELECT time_ms, bytes FROM container_sizes WHERE container_id = ?1 ORDER BY time_ms",
                    params![h.id as i64],
                    |r| Ok((u(r, 0)?, u(r, 1)?)),
                )?;
            }
        }
        Ok(rows)
    }

    fn sites(&self, snapshot: i64) -> Result<Vec<SiteRow>, StoreError> {
        let raw = self.rows(
            "SELECT s.class, s.frames, v.live_bytes, v.allocated_bytes FROM site_volumes v JOIN sites s ON s.id = v.site
             WHERE v.snapshot = ?1 ORDER BY v.live_bytes DESC, v.allocated_bytes DESC",
            params![snapshot],
            |r| Ok((r.get::<_, i64>(0)?, split_path(&r.get::<_, String>(1)?), u(r, 2)?, u(r, 3)?)),
        )?;
        Ok(raw
            .into_iter()
            .map(|(c, frames, live_bytes, allocated_bytes)| SiteRow {
                class: self.name(c),
                frames,
                live_bytes,
                allocated_bytes,
            })
            .collect())
    }

    fn events(&self) -> Result<Vec<String>, StoreError> {
        self.rows("SELECT message FROM events ORDER BY rowid", [], |r| r.get(0))
    }

    fn watched(&self) -> Result<Vec<WatchedObject>, StoreError> {
        if self.version < 2 {
            return Ok(Vec::new());
        }
        let fields = if self.version >= 6 { "fields" } else { "''" };
        let sql =
            format!("SELECT class, holders, tagged_ms, last_ms, location, freed, {fields} FROM watched ORDER BY slot");
        self.rows(&sql, [], |r| {
            Ok(WatchedObject {
                class: r.get(0)?,
                holders: split_path(&r.get::<_, String>(1)?),
                tagged_ms: u(r, 2)?,
                last_ms: r.get::<_, Option<i64>>(3)?.map(|t| t.max(0) as u64),
                location: r.get(4)?,
                freed: r.get(5)?,
                fields: crate::split_keeping_empty(&r.get::<_, String>(6)?),
            })
        })
    }

    fn captures(&self, store: &Path) -> Result<Vec<Capture>, StoreError> {
        if self.version < 4 {
            return Ok(Vec::new());
        }
        let dir = store.parent().unwrap_or(Path::new(""));
        self.rows("SELECT time_ms, file, live_bytes, reason FROM captures ORDER BY rowid", [], |r| {
            Ok(Capture {
                time_ms: u(r, 0)?,
                path: dir.join(r.get::<_, String>(1)?),
                live_bytes: u(r, 2)?,
                reason: r.get(3)?,
            })
        })
    }

    fn expectations(&self) -> Result<Vec<StoredExpectation>, StoreError> {
        if self.version < 2 {
            return Ok(Vec::new());
        }
        self.rows(
            "SELECT class, site, at_ms, freed, checked_ms, reached, held_by FROM expectations ORDER BY slot",
            [],
            |r| {
                Ok(StoredExpectation {
                    class: r.get(0)?,
                    site: r.get(1)?,
                    at_ms: u(r, 2)?,
                    freed: r.get(3)?,
                    checked_ms: r.get::<_, Option<i64>>(4)?.map(|t| t.max(0) as u64),
                    reached: r.get(5)?,
                    held_by: split_path(&r.get::<_, String>(6)?),
                })
            },
        )
    }

    /// A snapshot as a class points-from graph (walks with their edges), with the bytes
    /// allocated per class.
    fn summary(&self, s: &SnapshotRow, what: &str) -> Result<(HeapSummary, FxHashMap<String, u64>), StoreError> {
        let rows = self.class_volumes(s.id)?;
        let allocated = rows.iter().map(|c| (c.class.clone(), c.allocated_bytes)).collect();
        let mut classes: Vec<ClassVolume> =
            rows.into_iter().map(|c| ClassVolume { name: c.class, instances: c.instances, bytes: c.bytes }).collect();
        classes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        let edges = match s.kind {
            SnapshotKind::Walk => self
                .edges(s.id)?
                .into_iter()
                .map(|e| EdgeVolume { from: e.from, to: e.to, bytes: e.bytes, references: e.references })
                .collect(),
            SnapshotKind::Sample | SnapshotKind::Probe => Vec::new(),
        };
        let summary = HeapSummary {
            source: format!("gc {} ({what})", s.gc_count),
            time_ms: Some(s.time_ms),
            gc_count: Some(s.gc_count),
            total_bytes: s.total_bytes,
            total_instances: s.total_instances,
            classes,
            edges,
            ..Default::default()
        };
        Ok((summary, allocated))
    }
}

/// Reads a run store; `max_samples` keeps that many sampled snapshots, evenly spaced and the
/// last one included (0 keeps all).
pub fn read(path: &Path, max_samples: usize) -> Result<Run, StoreError> {
    let p = path.display().to_string();
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(err(&p))?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(err(&p))?;
    let has_meta: Option<String> = conn
        .query_row("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'", [], |r| r.get(0))
        .optional()
        .map_err(err(&p))?;
    if has_meta.is_none() {
        return Err(StoreError::NotARunStore(p));
    }
    let tx = conn.unchecked_transaction().map_err(err(&p))?;
    let version = schema::version_of(&tx).map_err(err(&p))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: p, found: version });
    }
    let mut reader = Reader { conn: &tx, path: &p, names: FxHashMap::default(), version };
    let meta = reader.meta()?;
    if !meta.contains_key("format") {
        return Err(StoreError::NotARunStore(p.clone()));
    }
    reader.names =
        reader.rows("SELECT id, name FROM classes", [], |r| Ok((r.get(0)?, r.get(1)?)))?.into_iter().collect();
    let snaps = reader.snapshots()?;
    let samples: Vec<&SnapshotRow> = snaps.iter().filter(|s| s.kind == SnapshotKind::Sample).collect();
    // Walk-checked snapshots are always kept; the others are thinned to `max_samples` for
    // each way of checking, so that a ranking on one kind has as many as on the other.
    let mut keep = vec![true; samples.len()];
    for level in [Checked::Nothing, Checked::Collection] {
        let these: Vec<usize> = (0..samples.len()).filter(|&k| samples[k].checked == level).collect();
        for (j, kept) in spaced(these.len(), max_samples).into_iter().enumerate() {
            keep[these[j]] = kept;
        }
    }
    let mut run = Run { meta, ..Default::default() };
    for (s, _) in samples.iter().zip(&keep).filter(|(_, &k)| k) {
        let (summary, allocated) = reader.summary(s, s.checked.label())?;
        run.samples.push(summary);
        run.checked.push(s.checked);
        run.allocated.push(allocated);
    }
    for s in snaps.iter().filter(|s| s.kind == SnapshotKind::Walk) {
        run.walks.push(reader.summary(s, "walk")?.0);
        run.pauses_ms.push(s.pause_ms.unwrap_or(0.0));
    }
    if let Some(last) = snaps.iter().rfind(|s| matches!(s.kind, SnapshotKind::Walk | SnapshotKind::Probe)) {
        run.holders = reader.holders(last)?;
    }
    if let Some(last) = samples.last() {
        run.sites = reader.sites(last.id)?;
    }
    run.events = reader.events()?;
    run.watched = reader.watched()?;
    run.expectations = reader.expectations()?;
    run.captures = reader.captures(path)?;
    Ok(run)
}

/// Which of `n` items to keep so that at most `max` remain, evenly spaced, first and last kept.
fn spaced(n: usize, max: usize) -> Vec<bool> {
    if max == 0 || n <= max {
        return vec![true; n];
    }
    let mut keep = vec![false; n];
    keep[n - 1] = true;
    for j in 0..max.saturating_sub(1) {
        // With n > max the step exceeds one, so the rounded positions are distinct.
        keep[((j * (n - 1)) as f64 / (max - 1) as f64).round() as usize] = true;
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::spaced;

    #[test]
    fn spacing_keeps_the_last_and_the_count() {
        for (n, max) in [(100, 10), (7, 3), (1000, 64), (5, 10)] {
            let keep = spaced(n, max);
            let kept: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
            assert_eq!(kept.len(), n.min(max), "{n} {max}");
            assert_eq!(*kept.last().unwrap(), n - 1);
        }
    }
}
