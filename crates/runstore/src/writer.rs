//! The writer, owned by the agent's worker thread.
//!
//! WAL journal, one transaction per snapshot: readers see whole snapshots while the JVM runs,
//! and `kill -9` loses at most the snapshot being written. Old snapshots are thinned (every
//! other one of the oldest half goes) so that a run of weeks stays bounded.

use std::path::Path;

use growth::HeapSummary;
use rusqlite::{params, Connection};
use rustc_hash::FxHashMap;

use crate::reader::{Checked, StoredExpectation, WatchedObject};
use crate::{err, schema, StoreError, PATH_SEP};

/// The value of `meta.format`, by which a reader knows a leakscope store.
const FORMAT: &str = "1";
/// Sampled snapshots kept before thinning.
pub const MAX_SAMPLES: i64 = 1024;
/// Walks kept before thinning.
pub const MAX_WALKS: i64 = 256;
const MAX_EVENTS: i64 = 1000;

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

/// A container and the chain of what holds it, as seen by a walk (what the growth engine
/// reads as [`growth::ContainerHolder`]).
pub type HolderChain = growth::ContainerHolder;

/// Sets one meta entry on `conn`.
fn put_meta(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", params![key, value]).map(|_| ())
}

/// The writer of one run store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: String,
    class_ids: FxHashMap<String, i64>,
}

impl Store {
    /// Creates (or truncates) the run store at `path` and writes `meta`. The store is built
    /// beside it and renamed into place with its schema and meta written, so a reader polling
    /// the path never finds a store without its format (one did, between two migrations).
    pub fn create(path: &Path, meta: &[(&str, String)]) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let building = format!("{p}.creating");
        for file in [p.clone(), format!("{p}-wal"), format!("{p}-shm"), building.clone(), format!("{building}-journal")]
        {
            let _ = std::fs::remove_file(file);
        }
        {
            let conn = Connection::open(&building).map_err(err(&p))?;
            schema::migrate(&conn).map_err(err(&p))?;
            let tx = conn.unchecked_transaction().map_err(err(&p))?;
            for (k, v) in std::iter::once(&("format", FORMAT.to_string())).chain(meta) {
                put_meta(&tx, k, v).map_err(err(&p))?;
            }
            tx.commit().map_err(err(&p))?;
        }
        std::fs::rename(&building, path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
        let conn = Connection::open(path).map_err(err(&p))?;
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;").map_err(err(&p))?;
        Ok(Store { conn, path: p, class_ids: FxHashMap::default() })
    }

    /// Sets one meta entry.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        put_meta(&self.conn, key, value).map_err(err(&self.path))
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
    pub fn add_site(&mut self, id: u32, class: &str, frames: &[String]) -> Result<(), StoreError> {
        let c = self.class(class)?;
        let frames = frames.join(PATH_SEP);
        self.conn
            .execute("INSERT OR REPLACE INTO sites(id, class, frames) VALUES (?1, ?2, ?3)", params![id, c, frames])
            .map_err(err(&self.path))?;
        Ok(())
    }

    /// Writes one sampled snapshot: estimated live volumes per class and per site (site id,
    /// live bytes, allocated bytes), and what checked the estimate.
    pub fn write_sample(
        &mut self,
        time_ms: u64,
        gc_count: u64,
        checked: Checked,
        classes: &[SampledClass],
        sites: &[(u32, u64, u64)],
    ) -> Result<(), StoreError> {
        let ids: Vec<i64> = classes.iter().map(|c| self.class(&c.name)).collect::<Result<_, _>>()?;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        tx.execute(
            "INSERT INTO snapshots(kind, time_ms, gc_count, total_bytes, total_instances, checked) VALUES ('sample', ?1, ?2, ?3, ?4, ?5)",
            params![
                time_ms as i64,
                gc_count as i64,
                classes.iter().map(|c| c.bytes).sum::<u64>() as i64,
                classes.iter().map(|c| c.instances).sum::<u64>() as i64,
                checked.column()
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
            insert_holders(&tx, snap, holders).map_err(err(&path))?;
        }
        tx.commit().map_err(err(&path))?;
        self.thin("walk", MAX_WALKS)
    }

    /// Writes a walk filtered by class (a probe: no class graph), how long it stopped the JVM,
    /// and the holders of the containers known after it.
    pub fn write_probe(&mut self, time_ms: u64, pause_ms: f64, holders: &[HolderChain]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        tx.execute(
            "INSERT INTO snapshots(kind, time_ms, gc_count, total_bytes, total_instances, pause_ms) VALUES ('probe', ?1, 0, 0, 0, ?2)",
            params![time_ms as i64, pause_ms],
        )
        .map_err(err(&path))?;
        let snap = tx.last_insert_rowid();
        insert_holders(&tx, snap, holders).map_err(err(&path))?;
        tx.commit().map_err(err(&path))?;
        self.thin("probe", MAX_WALKS)
    }

    /// Records the sizes of containers' arrays read between walks: (container id, bytes), at `time_ms`.
    pub fn write_container_sizes(&mut self, time_ms: u64, sizes: &[(u64, u64)]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        {
            let mut ins = tx.prepare_cached("INSERT INTO container_sizes VALUES (?1, ?2, ?3)").map_err(err(&path))?;
            for &(id, bytes) in sizes {
                ins.execute(params![id as i64, time_ms as i64, bytes as i64]).map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))
    }

    /// Replaces the expectations with `all`, by slot (their index).
    pub fn write_expectations(&mut self, all: &[StoredExpectation]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(err(&path))?;
        {
            let mut ins = tx
                .prepare_cached("INSERT OR REPLACE INTO expectations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .map_err(err(&path))?;
            for (slot, x) in all.iter().enumerate() {
                ins.execute(params![
                    slot as i64,
                    x.class,
                    x.site,
                    x.at_ms as i64,
                    x.freed,
                    x.checked_ms.map(|t| t as i64),
                    x.reached,
                    x.held_by.join(PATH_SEP)
                ])
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
                .prepare_cached("INSERT OR REPLACE INTO watched VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .map_err(err(&path))?;
            for (slot, w) in rows {
                ins.execute(params![
                    i64::from(*slot),
                    w.class,
                    w.holders.join(PATH_SEP),
                    w.tagged_ms as i64,
                    w.last_ms.map(|t| t as i64),
                    w.location,
                    w.freed,
                    w.fields.join(PATH_SEP)
                ])
                .map_err(err(&path))?;
            }
        }
        tx.commit().map_err(err(&path))
    }

    /// Records a heap dump the agent took (`file`, a name in the store's directory) and why.
    pub fn write_capture(&mut self, time_ms: u64, file: &str, live_bytes: u64, reason: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO captures(time_ms, file, live_bytes, reason) VALUES (?1, ?2, ?3, ?4)",
                params![time_ms as i64, file, live_bytes as i64, reason],
            )
            .map_err(err(&self.path))?;
        Ok(())
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

/// Inserts the holders of snapshot `snap`.
fn insert_holders(tx: &rusqlite::Transaction<'_>, snap: i64, holders: &[HolderChain]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO holders(snapshot, container, array, bytes, path, container_id, array_field, fields, element, elements) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for h in holders {
        ins.execute(params![
            snap,
            h.container,
            h.array,
            h.bytes as i64,
            h.path.join(PATH_SEP),
            h.id as i64,
            h.array_field,
            h.fields.join(PATH_SEP),
            h.element,
            h.elements as i64
        ])?;
    }
    Ok(())
}
