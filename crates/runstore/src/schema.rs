//! The run store's schema, versioned by SQLite's `user_version`: each migration takes a store
//! from one version to the next, and a writer applies them all in order. Readers never
//! migrate (they open the store read-only); they read what the version says is there.

use rusqlite::Connection;

/// The schema a store this build writes has.
pub const SCHEMA_VERSION: i64 = 6;

/// `MIGRATIONS[v]` takes a store from version `v` to `v + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    // 1: samples, walks, sites, holders, events.
    "
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE classes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE sites(id INTEGER PRIMARY KEY, class INTEGER NOT NULL, frames TEXT NOT NULL);
    CREATE TABLE snapshots(
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL, time_ms INTEGER NOT NULL, gc_count INTEGER NOT NULL,
        total_bytes INTEGER NOT NULL, total_instances INTEGER NOT NULL, pause_ms REAL, clean INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE class_volumes(
        snapshot INTEGER NOT NULL, class INTEGER NOT NULL, instances INTEGER NOT NULL, bytes INTEGER NOT NULL,
        allocated_bytes INTEGER NOT NULL, PRIMARY KEY(snapshot, class)) WITHOUT ROWID;
    CREATE TABLE site_volumes(
        snapshot INTEGER NOT NULL, site INTEGER NOT NULL, live_bytes INTEGER NOT NULL, allocated_bytes INTEGER NOT NULL,
        PRIMARY KEY(snapshot, site)) WITHOUT ROWID;
    CREATE TABLE edges(
        snapshot INTEGER NOT NULL, from_class INTEGER NOT NULL, statics INTEGER NOT NULL, to_class INTEGER NOT NULL,
        bytes INTEGER NOT NULL, refs INTEGER NOT NULL, PRIMARY KEY(snapshot, from_class, statics, to_class)) WITHOUT ROWID;
    CREATE TABLE holders(
        snapshot INTEGER NOT NULL, container TEXT NOT NULL, array TEXT NOT NULL, bytes INTEGER NOT NULL, path TEXT NOT NULL);
    CREATE TABLE events(time_ms INTEGER NOT NULL, message TEXT NOT NULL);
    ",
    // 2: staleness (`--watch`) and `LeakScope.expectDead`.
    "
    CREATE TABLE watched(
        slot INTEGER PRIMARY KEY, class TEXT NOT NULL, holders TEXT NOT NULL, tagged_ms INTEGER NOT NULL,
        last_ms INTEGER, location TEXT, freed INTEGER NOT NULL);
    CREATE TABLE expectations(
        slot INTEGER PRIMARY KEY, class TEXT NOT NULL, site TEXT NOT NULL, at_ms INTEGER NOT NULL,
        freed INTEGER NOT NULL, checked_ms INTEGER, reached INTEGER NOT NULL, held_by TEXT NOT NULL);
    ",
    // 3: a sample says what checked its estimate (`Checked`): 0 nothing, 1 a heap walk (the
    // old `clean`), 2 a collection whose frees were applied.
    "
    ALTER TABLE snapshots RENAME COLUMN clean TO checked;
    ",
    // 4: live heap dumps the agent took when a candidate was confirmed (`capture_on_leak`);
    // `file` is a name in the store's directory.
    "
    CREATE TABLE captures(
        time_ms INTEGER NOT NULL, file TEXT NOT NULL, live_bytes INTEGER NOT NULL, reason TEXT NOT NULL);
    ",
    // 5: containers numbered across walks, the fields of their chains, their arrays' main
    // element class, and their arrays' sizes read between walks (no pause), for heaps too big
    // to walk often.
    "
    ALTER TABLE holders ADD COLUMN container_id INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE holders ADD COLUMN array_field TEXT NOT NULL DEFAULT '';
    ALTER TABLE holders ADD COLUMN fields TEXT NOT NULL DEFAULT '';
    ALTER TABLE holders ADD COLUMN element TEXT NOT NULL DEFAULT '';
    ALTER TABLE holders ADD COLUMN elements INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE container_sizes(
        container_id INTEGER NOT NULL, time_ms INTEGER NOT NULL, bytes INTEGER NOT NULL);
    CREATE INDEX container_sizes_by_id ON container_sizes(container_id, time_ms);
    ",
    // 6: the fields along a watched object's path.
    "
    ALTER TABLE watched ADD COLUMN fields TEXT NOT NULL DEFAULT '';
    ",
];

/// Brings a new, empty store to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let mut version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    while version < SCHEMA_VERSION {
        conn.execute_batch(&format!(
            "BEGIN; {} PRAGMA user_version = {}; COMMIT;",
            MIGRATIONS[version as usize],
            version + 1
        ))?;
        version += 1;
    }
    Ok(())
}

/// The schema version of a store. Stores written before versions were kept say 0; they
/// have version 1's tables and, when written after staleness came, version 2's.
pub(crate) fn version_of(conn: &Connection) -> rusqlite::Result<i64> {
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if v > 0 {
        return Ok(v);
    }
    let later: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('watched', 'expectations')",
        [],
        |r| r.get(0),
    )?;
    Ok(if later == 2 { 2 } else { 1 })
}
