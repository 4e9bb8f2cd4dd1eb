//! The run store: one SQLite file per JVM run, written by the agent's worker thread and read
//! by `leakscope growth RUN.db` and `leakscope top`.
//!
//! WAL journal, one transaction per snapshot: readers see whole snapshots while the JVM runs,
//! and `kill -9` loses at most the snapshot being written. Old snapshots are thinned (every
//! other one of the oldest half goes) so that a run of weeks stays bounded.

use std::collections::BTreeMap;
use std::path::Path;

use growth::{ClassVolume, ContainerHolder, EdgeVolume, HeapSummary};

pub use crate::walk::HolderChain;

/// Separates the holders of a chain in the `holders` table.
const PATH_SEP: &str = " <- ";
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use rustc_hash::FxHashMap;

/// Format version written to `meta`.
pub const FORMAT: &str = "1";
/// Sampled snapshots kept before thinning.
pub const MAX_SAMPLES: i64 = 1024;
/// Walks kept before thinning.
pub const MAX_WALKS: i64 = 256;
const MAX_EVENTS: i64 = 1000;

/// A run store that cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no.
    #[error("run store {path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A SQLite file that is not a leakscope run store.
    #[error("{0} is a SQLite file but not a leakscope run store (no leakscope format in its meta table)")]
    NotARunStore(String),
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS classes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS sites(id INTEGER PRIMARY KEY, class INTEGER NOT NULL, frames TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots(
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, time_ms INTEGER NOT NULL, gc_count INTEGER NOT NULL,
    total_bytes INTEGER NOT NULL, total_instances INTEGER NOT NULL, pause_ms REAL, clean INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS class_volumes(
    snapshot INTEGER NOT NULL, class INTEGER NOT NULL, instances INTEGER NOT NULL, bytes INTEGER NOT NULL,
    allocated_bytes INTEGER NOT NULL, PRIMARY KEY(snapshot, class)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS site_volumes(
    snapshot INTEGER NOT NULL, site INTEGER NOT NULL, live_bytes INTEGER NOT NULL, allocated_bytes INTEGER NOT NULL,
    PRIMARY KEY(snapshot, site)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edges(
    snapshot INTEGER NOT NULL, from_class INTEGER NOT NULL, statics INTEGER NOT NULL, to_class INTEGER NOT NULL,
    bytes INTEGER NOT NULL, refs INTEGER NOT NULL, PRIMARY KEY(snapshot, from_class, statics, to_class)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS holders(
    snapshot INTEGER NOT NULL, container TEXT NOT NULL, array TEXT NOT NULL, bytes INTEGER NOT NULL, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(time_ms INTEGER NOT NULL, message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS watched(
    slot INTEGER PRIMARY KEY, class TEXT NOT NULL, holders TEXT NOT NULL, tagged_ms INTEGER NOT NULL,
    last_ms INTEGER, location TEXT, freed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS expectations(
    slot INTEGER PRIMARY KEY, class TEXT NOT NULL, site TEXT NOT NULL, at_ms INTEGER NOT NULL,
    freed INTEGER NOT NULL, checked_ms INTEGER, reached INTEGER NOT NULL, held_by TEXT NOT NULL);
";

/// A watched object (`--watch`) and its last use, as the agent last wrote it.
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
}

/// An object the program declared dead (`LeakScope.expectDead`), as the agent last saw it.
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

/// One class in a sampled snapshot: estimated live objects and bytes, and bytes allocated so far.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledClass {
    /// Class name.
    pub name: String,
    /// Estimated live objects.
    pub instances: u64,
    /// Estimated live bytes.
    pub bytes: u64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: u64,
}

/// The writer, owned by the agent's worker thread.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: String,
    class_ids: FxHashMap<String, i64>,
}

fn err(path: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |source| StoreError::Sqlite { path: path.to_string(), source }
}

impl Store {
    /// Creates (or truncates) the run store at `path` and writes `meta`.
    pub fn create(path: &Path, meta: &[(&str, String)]) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{p}{suffix}"));
        }
        let conn = Connection::open(path).map_err(err(&p))?;
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;").map_err(err(&p))?;
        conn.execute_batch(SCHEMA).map_err(err(&p))?;
        let mut store = Store { conn, path: p, class_ids: FxHashMap::default() };
        store.set_meta("format", FORMAT)?;
        for (k, v) in meta {
            store.set_meta(k, v)?;
        }
        Ok(store)
    }

    /// Sets one meta entry.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn
            .execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", params![key, value])
            .map_err(err(&self.path))?;
        Ok(())
    }

    fn class(&mut self, name: &str) -> Result<i64, StoreError> {
        if let Some(&id) = self.class_ids.get(name) {
            return Ok(id);
        }
        self.conn.execute("INSERT OR IGNORE INTO classes(name) VALUES (?1)", params![name]).map_err(err(&self.path))?;
        let id: i64 = self
            .conn
            .query_row("SELECT id FROM classes WHERE name = ?1", params![name], |r| r.get(0))
            .map_err(err(&self.path))?;
        self.class_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// Records allocation site `id` of `class`, described by `frames` (innermost first).
    pub fn add_site(&mut self, id: u32, class: &str, frames: &str) -> Result<(), StoreError> {
        let c = self.class(class)?;
        self.conn
            .execute("INSERT OR REPLACE INTO sites(id, class, frames) VALUES (?1, ?2, ?3)", params![id, c, frames])
            .map_err(err(&self.path))?;
        Ok(())
    }

    /// Writes one sampled snapshot: estimated live volumes per class and per site; `clean`
    /// when taken right after a walk removed the samples it did not reach.
    pub fn write_sample(
        &mut self,
        time_ms: u64,
        gc_count: u64,
        clean: bool,
        classes: &[SampledClass],
        sites: &[(u32, u64, u64)],
    ) -> Result<(), StoreError> {
        let ids: Vec<i64> = classes.iter().map(|c| self.class(&c.name)).collect::<Result<_, _>>()?;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        tx.execute(
            "INSERT INTO snapshots(kind, time_ms, gc_count, total_bytes, total_instances, clean) VALUES ('sample', ?1, ?2, ?3, ?4, ?5)",
            params![
                time_ms as i64,
                gc_count as i64,
                classes.iter().map(|c| c.bytes).sum::<u64>() as i64,
                classes.iter().map(|c| c.instances).sum::<u64>() as i64,
                i64::from(clean)
            ],
        )
        .map_err(err(&path))?;
        let snap = tx.last_insert_rowid();
        {
            let mut ins =
                tx.prepare_cached("INSERT INTO class_volumes VALUES (?1, ?2, ?3, ?4, ?5)").map_err(err(&path))?;
            for (c, id) in classes.iter().zip(ids) {
                ins.execute(params![snap, id, c.instances as i64, c.bytes as i64, c.allocated_bytes as i64])
                    .map_err(err(&path))?;
            }
            let mut ins = tx.prepare_cached("INSERT INTO site_volumes VALUES (?1, ?2, ?3, ?4)").map_err(err(&path))?;
            for &(site, live, allocated) in sites {
                ins.execute(params![snap, site, live as i64, allocated as i64]).map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))?;
        self.thin("sample", MAX_SAMPLES)
    }

    /// Writes one walk's class points-from graph, how long it stopped the JVM, and the
    /// holders of the containers it saw.
    pub fn write_walk(&mut self, s: &HeapSummary, pause_ms: f64, holders: &[HolderChain]) -> Result<(), StoreError> {
        let class_ids: Vec<i64> = s.classes.iter().map(|c| self.class(&c.name)).collect::<Result<_, _>>()?;
        let mut edge_ids = Vec::with_capacity(s.edges.len());
        for e in &s.edges {
            let (from, statics) = match e.from.strip_prefix("class ") {
                Some(name) => (self.class(name)?, 1),
                None => (self.class(&e.from)?, 0),
            };
            edge_ids.push((from, statics, self.class(&e.to)?));
        }
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        tx.execute(
            "INSERT INTO snapshots(kind, time_ms, gc_count, total_bytes, total_instances, pause_ms) VALUES ('walk', ?1, ?2, ?3, ?4, ?5)",
            params![
                s.time_ms.unwrap_or(0) as i64,
                s.gc_count.unwrap_or(0) as i64,
                s.total_bytes as i64,
                s.total_instances as i64,
                pause_ms
            ],
        )
        .map_err(err(&path))?;
        let snap = tx.last_insert_rowid();
        {
            let mut ins =
                tx.prepare_cached("INSERT INTO class_volumes VALUES (?1, ?2, ?3, ?4, 0)").map_err(err(&path))?;
            for (c, id) in s.classes.iter().zip(class_ids) {
                ins.execute(params![snap, id, c.instances as i64, c.bytes as i64]).map_err(err(&path))?;
            }
            let mut ins = tx.prepare_cached("INSERT INTO edges VALUES (?1, ?2, ?3, ?4, ?5, ?6)").map_err(err(&path))?;
            for (e, (from, statics, to)) in s.edges.iter().zip(edge_ids) {
                ins.execute(params![snap, from, statics, to, e.bytes as i64, e.references as i64])
                    .map_err(err(&path))?;
            }
            let mut ins = tx.prepare_cached("INSERT INTO holders VALUES (?1, ?2, ?3, ?4, ?5)").map_err(err(&path))?;
            for h in holders {
                ins.execute(params![snap, h.container, h.array, h.bytes as i64, h.path.join(PATH_SEP)])
                    .map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))?;
        self.thin("walk", MAX_WALKS)
    }

    /// Replaces the expectations with `all` (by slot; `names` names class ids).
    pub fn write_expectations(
        &mut self,
        all: &[crate::expect::Expectation],
        names: &[String],
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        {
            let mut ins = tx
                .prepare_cached("INSERT OR REPLACE INTO expectations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .map_err(err(&path))?;
            for (slot, x) in all.iter().enumerate() {
                let class = names.get(x.class as usize).map_or("(unknown class)", String::as_str);
                let (checked, held) = match &x.checked {
                    Some((t, held)) => (Some(*t as i64), held.join(PATH_SEP)),
                    None => (None, String::new()),
                };
                let reached = x.checked.as_ref().is_some_and(|(_, h)| !h.is_empty());
                ins.execute(params![slot as i64, class, x.site, x.at_ms as i64, x.freed, checked, reached, held])
                    .map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))
    }

    /// Writes watched objects by slot (replacing earlier rows of the same slots).
    pub fn write_watched(&mut self, rows: &[(u32, WatchedObject)]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        {
            let mut ins = tx
                .prepare_cached("INSERT OR REPLACE INTO watched VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
                .map_err(err(&path))?;
            for (slot, w) in rows {
                ins.execute(params![
                    i64::from(*slot),
                    w.class,
                    w.holders.join(PATH_SEP),
                    w.tagged_ms as i64,
                    w.last_ms.map(|t| t as i64),
                    w.location,
                    w.freed
                ])
                .map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))
    }

    /// Records something the user should know (a skipped walk, an internal error).
    pub fn event(&mut self, time_ms: u64, message: &str) -> Result<(), StoreError> {
        self.conn
            .execute("INSERT INTO events(time_ms, message) VALUES (?1, ?2)", params![time_ms as i64, message])
            .map_err(err(&self.path))?;
        self.conn
            .execute("DELETE FROM events WHERE rowid <= (SELECT MAX(rowid) FROM events) - ?1", params![MAX_EVENTS])
            .map_err(err(&self.path))?;
        Ok(())
    }

    /// Keeps at most `max` snapshots of `kind`: drops every other one of the oldest half.
    fn thin(&mut self, kind: &str, max: i64) -> Result<(), StoreError> {
        let path = self.path.clone();
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM snapshots WHERE kind = ?1", params![kind], |r| r.get(0))
            .map_err(err(&path))?;
        if n <= max {
            return Ok(());
        }
        let tx = self.conn.transaction().map_err(err(&path))?;
        let old: Vec<i64> = {
            let mut q =
                tx.prepare("SELECT id FROM snapshots WHERE kind = ?1 ORDER BY id LIMIT ?2").map_err(err(&path))?;
            let rows = q.query_map(params![kind, n / 2], |r| r.get(0)).map_err(err(&path))?;
            rows.collect::<Result<_, _>>().map_err(err(&path))?
        };
        for id in old.iter().skip(1).step_by(2) {
            for table in ["class_volumes", "site_volumes", "edges", "holders"] {
                tx.execute(&format!("DELETE FROM {table} WHERE snapshot = ?1"), params![id]).map_err(err(&path))?;
            }
            tx.execute("DELETE FROM snapshots WHERE id = ?1", params![id]).map_err(err(&path))?;
        }
        tx.commit().map_err(err(&path))
    }
}

/// An allocation site of a class and its estimated volumes at the last sampled snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// Class allocated.
    pub class: String,
    /// Frames, innermost first, separated by ` <- `.
    pub frames: String,
    /// Estimated live bytes.
    pub live_bytes: u64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: u64,
}

/// Everything a run store holds, read back.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// `meta` entries: pid, main class, JVM, options, agent status.
    pub meta: BTreeMap<String, String>,
    /// Sampled snapshots (estimated live volumes per class, no edges), oldest first.
    pub samples: Vec<HeapSummary>,
    /// Which of `samples` were taken right after a walk (dead objects not yet collected removed).
    pub clean: Vec<bool>,
    /// Estimated bytes allocated per class up to each sampled snapshot.
    pub allocated: Vec<FxHashMap<String, u64>>,
    /// Walks (class points-from graphs), oldest first.
    pub walks: Vec<HeapSummary>,
    /// How long each walk stopped the JVM, milliseconds.
    pub pauses_ms: Vec<f64>,
    /// Containers of big arrays in the last walk and the chains of what holds them.
    pub holders: Vec<ContainerHolder>,
    /// Allocation sites at the last sampled snapshot, most live bytes first.
    pub sites: Vec<Site>,
    /// Messages the agent left, oldest first.
    pub events: Vec<String>,
    /// Objects declared dead with `LeakScope.expectDead`, in call order.
    pub expectations: Vec<StoredExpectation>,
    /// Objects watched for staleness (`--watch`).
    pub watched: Vec<WatchedObject>,
}

/// Whether `head` (a file's first bytes) is a SQLite database.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// Reads a run store; `max_samples` keeps that many sampled snapshots, evenly spaced and the
/// last one included (0 keeps all).
pub fn read(path: &Path, max_samples: usize) -> Result<Run, StoreError> {
    let p = path.display().to_string();
    let e = err(&p);
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(&e)?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(&e)?;
    let has_meta: Option<String> = conn
        .query_row("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'", [], |r| r.get(0))
        .optional()
        .map_err(&e)?;
    if has_meta.is_none() {
        return Err(StoreError::NotARunStore(path.display().to_string()));
    }
    let tx = conn.unchecked_transaction().map_err(&e)?;
    let meta: BTreeMap<String, String> = {
        let mut q = tx.prepare("SELECT key, value FROM meta").map_err(&e)?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(&e)?;
        rows.collect::<Result<_, _>>().map_err(&e)?
    };
    if !meta.contains_key("format") {
        return Err(StoreError::NotARunStore(path.display().to_string()));
    }
    let names: FxHashMap<i64, String> = {
        let mut q = tx.prepare("SELECT id, name FROM classes").map_err(&e)?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(&e)?;
        rows.collect::<Result<_, _>>().map_err(&e)?
    };
    let name = |id: i64| names.get(&id).cloned().unwrap_or_else(|| format!("(class #{id})"));
    type Snap = (i64, String, i64, i64, i64, i64, Option<f64>, i64);
    let snaps: Vec<Snap> = {
        let mut q = tx
            .prepare(
                "SELECT id, kind, time_ms, gc_count, total_bytes, total_instances, pause_ms, clean FROM snapshots ORDER BY id",
            )
            .map_err(&e)?;
        let rows = q
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })
            .map_err(&e)?;
        rows.collect::<Result<_, _>>().map_err(&e)?
    };
    let sample_ids: Vec<usize> = (0..snaps.len()).filter(|&i| snaps[i].1 == "sample").collect();
    // Clean snapshots are always kept; the others are thinned to `max_samples`.
    let dirty: Vec<usize> = (0..sample_ids.len()).filter(|&k| snaps[sample_ids[k]].7 == 0).collect();
    let keep_dirty = spaced(dirty.len(), max_samples);
    let mut keep = vec![true; sample_ids.len()];
    for (j, &k) in dirty.iter().enumerate() {
        keep[k] = keep_dirty[j];
    }
    let mut run = Run { meta, ..Default::default() };
    let mut classes_q = tx
        .prepare("SELECT class, instances, bytes, allocated_bytes FROM class_volumes WHERE snapshot = ?1")
        .map_err(&e)?;
    let mut edges_q =
        tx.prepare("SELECT from_class, statics, to_class, bytes, refs FROM edges WHERE snapshot = ?1").map_err(&e)?;
    let mut summary_of = |s: &Snap, what: &str| -> Result<(HeapSummary, FxHashMap<String, u64>), StoreError> {
        let mut allocated = FxHashMap::default();
        let rows = classes_q
            .query_map(params![s.0], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
            })
            .map_err(&e)?;
        let mut classes = Vec::new();
        for row in rows {
            let (c, instances, bytes, alloc) = row.map_err(&e)?;
            allocated.insert(name(c), alloc as u64);
            classes.push(ClassVolume { name: name(c), instances: instances as u64, bytes: bytes as u64 });
        }
        classes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        Ok((
            HeapSummary {
                source: format!("gc {} ({what})", s.3),
                time_ms: Some(s.2 as u64),
                gc_count: Some(s.3 as u64),
                total_bytes: s.4 as u64,
                total_instances: s.5 as u64,
                classes,
                edges: Vec::new(),
                ..Default::default()
            },
            allocated,
        ))
    };
    for (k, &i) in sample_ids.iter().enumerate() {
        if keep[k] {
            let clean = snaps[i].7 != 0;
            let (s, allocated) = summary_of(&snaps[i], if clean { "walk-checked" } else { "sampled" })?;
            run.samples.push(s);
            run.clean.push(clean);
            run.allocated.push(allocated);
        }
    }
    for s in snaps.iter().filter(|s| s.1 == "walk") {
        let (mut summary, _) = summary_of(s, "walk")?;
        let rows = edges_q
            .query_map(params![s.0], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .map_err(&e)?;
        for row in rows {
            let (from, statics, to, bytes, refs) = row.map_err(&e)?;
            let from = if statics != 0 { growth::statics_of(&name(from)) } else { name(from) };
            summary.edges.push(EdgeVolume { from, to: name(to), bytes: bytes as u64, references: refs as u64 });
        }
        run.walks.push(summary);
        run.pauses_ms.push(s.6.unwrap_or(0.0));
    }
    if let Some(last) = snaps.iter().rfind(|s| s.1 == "walk") {
        let mut q = tx
            .prepare("SELECT container, array, bytes, path FROM holders WHERE snapshot = ?1 ORDER BY bytes DESC")
            .map_err(&e)?;
        let rows = q
            .query_map(params![last.0], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
            })
            .map_err(&e)?;
        for row in rows {
            let (container, array, bytes, path) = row.map_err(&e)?;
            let path = split_path(&path);
            run.holders.push(ContainerHolder { container, array, bytes: bytes as u64, path });
        }
    }
    if let Some(&last) = sample_ids.last() {
        let mut q = tx
            .prepare(
                "SELECT s.class, s.frames, v.live_bytes, v.allocated_bytes FROM site_volumes v JOIN sites s ON s.id = v.site
                 WHERE v.snapshot = ?1 ORDER BY v.live_bytes DESC, v.allocated_bytes DESC",
            )
            .map_err(&e)?;
        let rows = q
            .query_map(params![snaps[last].0], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
            })
            .map_err(&e)?;
        for row in rows {
            let (c, frames, live, alloc) = row.map_err(&e)?;
            run.sites.push(Site { class: name(c), frames, live_bytes: live as u64, allocated_bytes: alloc as u64 });
        }
    }
    {
        let mut q = tx.prepare("SELECT message FROM events ORDER BY rowid").map_err(&e)?;
        let rows = q.query_map([], |r| r.get(0)).map_err(&e)?;
        run.events = rows.collect::<Result<_, _>>().map_err(&e)?;
    }
    // Stores written before these tables existed have none.
    let has_table = |name: &str| -> Result<bool, StoreError> {
        let found: Option<String> = tx
            .query_row("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1", [name], |r| r.get(0))
            .optional()
            .map_err(&e)?;
        Ok(found.is_some())
    };
    if has_table("watched")? {
        let mut q = tx
            .prepare("SELECT class, holders, tagged_ms, last_ms, location, freed FROM watched ORDER BY slot")
            .map_err(&e)?;
        let rows = q
            .query_map([], |r| {
                Ok(WatchedObject {
                    class: r.get(0)?,
                    holders: split_path(&r.get::<_, String>(1)?),
                    tagged_ms: r.get::<_, i64>(2)? as u64,
                    last_ms: r.get::<_, Option<i64>>(3)?.map(|t| t as u64),
                    location: r.get(4)?,
                    freed: r.get(5)?,
                })
            })
            .map_err(&e)?;
        run.watched = rows.collect::<Result<_, _>>().map_err(&e)?;
    }
    if has_table("expectations")? {
        let mut q = tx
            .prepare("SELECT class, site, at_ms, freed, checked_ms, reached, held_by FROM expectations ORDER BY slot")
            .map_err(&e)?;
        let rows = q
            .query_map([], |r| {
                Ok(StoredExpectation {
                    class: r.get(0)?,
                    site: r.get(1)?,
                    at_ms: r.get::<_, i64>(2)? as u64,
                    freed: r.get(3)?,
                    checked_ms: r.get::<_, Option<i64>>(4)?.map(|t| t as u64),
                    reached: r.get(5)?,
                    held_by: split_path(&r.get::<_, String>(6)?),
                })
            })
            .map_err(&e)?;
        run.expectations = rows.collect::<Result<_, _>>().map_err(&e)?;
    }
    Ok(run)
}

/// A chain of holders as the store writes it, `A <- B <- C`, back into its parts.
fn split_path(text: &str) -> Vec<String> {
    text.split(PATH_SEP).filter(|h| !h.is_empty()).map(str::to_string).collect()
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
    use super::*;

    fn class(name: &str, bytes: u64) -> SampledClass {
        SampledClass { name: name.into(), instances: bytes / 16, bytes, allocated_bytes: bytes * 3 }
    }

    #[test]
    fn writes_and_reads_back_samples_walks_sites_and_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.db");
        let mut s = Store::create(&path, &[("pid", "42".into())]).unwrap();
        s.add_site(7, "Session", "Leak.add(Leak.java:10)").unwrap();
        s.write_sample(1000, 3, false, &[class("Session", 1600), class("byte[]", 3200)], &[(7, 1600, 4800)]).unwrap();
        s.write_sample(2000, 5, true, &[class("Session", 3200)], &[(7, 3200, 9600)]).unwrap();
        let walk = HeapSummary {
            time_ms: Some(2500),
            gc_count: Some(6),
            total_bytes: 100,
            total_instances: 3,
            classes: vec![ClassVolume { name: "Session".into(), instances: 2, bytes: 64 }],
            edges: vec![EdgeVolume { from: "class Leak".into(), to: "Session".into(), bytes: 64, references: 2 }],
            ..Default::default()
        };
        let chain = HolderChain {
            container: "java.util.HashMap".into(),
            array: "java.util.HashMap$Node[]".into(),
            bytes: 1 << 20,
            path: vec!["class Leak".into()],
        };
        s.write_walk(&walk, 12.5, std::slice::from_ref(&chain)).unwrap();
        s.event(3000, "walk skipped").unwrap();
        let run = read(&path, 0).unwrap();
        assert_eq!(run.meta["pid"], "42");
        assert_eq!(run.samples.len(), 2);
        assert_eq!(run.clean, vec![false, true]);
        assert_eq!(run.samples[0].total_bytes, 4800);
        assert_eq!(run.samples[1].classes[0].bytes, 3200);
        assert_eq!(run.allocated[1]["Session"], 9600);
        assert_eq!(run.walks.len(), 1);
        assert_eq!(run.walks[0].edges[0].from, "class Leak");
        assert_eq!(run.walks[0].classes, walk.classes);
        assert_eq!(run.pauses_ms, vec![12.5]);
        assert_eq!(run.holders[0].path, chain.path);
        assert_eq!(run.holders[0].container, chain.container);
        assert_eq!(run.sites[0].frames, "Leak.add(Leak.java:10)");
        assert_eq!(run.sites[0].live_bytes, 3200);
        assert_eq!(run.events, vec!["walk skipped".to_string()]);
    }

    #[test]
    fn thinning_bounds_the_store_and_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.db");
        let mut s = Store::create(&path, &[]).unwrap();
        for t in 0..(MAX_SAMPLES as u64 * 3) {
            s.write_sample(t, t, false, &[class("A", t + 1)], &[]).unwrap();
        }
        let run = read(&path, 0).unwrap();
        assert!(run.samples.len() as i64 <= MAX_SAMPLES);
        assert_eq!(run.samples.last().unwrap().time_ms, Some(MAX_SAMPLES as u64 * 3 - 1));
        assert!(run.samples.windows(2).all(|w| w[0].time_ms < w[1].time_ms));
        assert_eq!(read(&path, 10).unwrap().samples.len(), 10);
    }

    #[test]
    fn spacing_keeps_the_last_and_the_count() {
        for (n, max) in [(100, 10), (7, 3), (1000, 64), (5, 10)] {
            let keep = spaced(n, max);
            let kept: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
            assert_eq!(kept.len(), n.min(max), "{n} {max}");
            assert_eq!(*kept.last().unwrap(), n - 1);
        }
    }

    #[test]
    fn other_sqlite_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t(x)").unwrap();
        assert!(matches!(read(&path, 0), Err(StoreError::NotARunStore(_))));
    }
}
