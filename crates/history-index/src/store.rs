//! The database of the search projection and its lifecycle policy.
//!
//! One SQLite file, `<cache root>/history-search/v1.sqlite`, holds for each session (harness
//! and session id) its witnesses — the files its lines were decoded from, with their stat
//! fingerprints and indexing checkpoints — the location and time of each of its lines, and
//! for each retrieval token the lines that hold it ([`postings`]). Message text is never stored.
//!
//! The policy, since the database is disposable and transcripts are the authority:
//! - it lives in a private directory (0700) on a local filesystem, in private files (0600),
//!   never through a symbolic link; anything else is a [`StoreError`] and the caller scans;
//! - WAL, `synchronous=NORMAL` (a power cut may lose the last transactions, never consistency),
//!   foreign keys, a short busy timeout;
//! - every write is one transaction per session, so a process killed at any moment leaves the
//!   previous state of that session or the new one;
//! - a file that is not such a database, or fails the integrity check, is moved aside as
//!   quarantined and replaced by an empty one;
//! - a schema newer than this build is opened read-only ([`Store::writable`] is `false`): it
//!   is never written, migrated or deleted.

mod catalog;
mod damage;
mod error;
mod fingerprint;
mod place;
mod postings;
mod ranges;
mod read;
mod record;
mod schema;
mod sum;
#[cfg(test)]
mod tests;
mod words;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use history_core::Snapshot;
use history_core::{SessionKey, SessionMeta};
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};

pub use catalog::Census;
pub use error::StoreError;
pub use fingerprint::{
    checkpoint_blocks, checkpoint_hash, checkpoint_hash_file, Fingerprint, CHECKPOINT_WINDOW,
};
pub use place::Place;
pub use postings::TokenLists;
pub use read::{Located, LocatedSpan};
use record::{int, line_time, time_columns, uint};
pub use record::{
    Candidate, LineRecord, LineRow, SessionRecord, SessionRow, SessionState, Stats, StoredMeta,
    TimeSpan, Witness,
};
pub use schema::SCHEMA_VERSION;
pub(crate) use words::encode_line;
pub use words::{term_hash, PARTS};

/// A read-only connection to a database already open, not yet made: see [`Store::reader`].
pub struct Reader {
    path: PathBuf,
    schema_version: i64,
}

impl Reader {
    /// The connection.
    pub fn open(&self) -> Result<Store, StoreError> {
        Store::connect_degraded(&self.path, self.schema_version).map_err(|e| match e {
            Attempt::Failed(e) => e,
            Attempt::Damaged => StoreError::Corrupt,
        })
    }
}

/// The projection's database, open.
pub struct Store {
    conn: Connection,
    /// The tokens of the lines the open write transaction has written ([`postings`]).
    acc: Option<Box<postings::Accumulator>>,
    path: PathBuf,
    /// The file opened, as it was just after opening.
    place: Place,
    /// Where opening it moved a damaged database aside.
    moved_aside: Option<PathBuf>,
    writable: bool,
    schema_version: i64,
    /// Whether the tables [`Check::Update`] checks are still to be checked before the first
    /// write: an update with nothing to write reads none of them.
    unchecked: std::cell::Cell<bool>,
    /// The census last read ([`Store::census_shared`]), with the database's data version and
    /// this connection's count of changes then.
    census: std::cell::RefCell<Option<(i64, u64, std::sync::Arc<Census>)>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("writable", &self.writable)
            .field("schema_version", &self.schema_version)
            .finish()
    }
}

/// How deeply [`Store::open_with`] checks an existing database; what fails it is quarantined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The header, the schema version and the tables: constant time, for every query.
    Schema,
    /// Also what an update checks before it writes: damage a query met and noted beside the
    /// database ([`Store::note_damage`]), and `PRAGMA integrity_check` of everything in a
    /// database of at most [`QUICK_CHECK_BYTES`]; in a larger one, `PRAGMA quick_check` of the
    /// tables of sessions, witnesses, segments and snapshots, before its first write (on
    /// 20,000 small sessions, 26 ms that an update with nothing to do spares). Damage
    /// elsewhere is found by the query that reads it.
    Update,
    /// Also `PRAGMA integrity_check` of everything and every row's checksum ([`sum`]), which
    /// reads the whole file: for `doctor` and `reindex`.
    Deep,
}

/// The largest database [`Check::Update`] checks whole: some 40 ms on a slow 2-core machine
/// (a 28 MiB database took 130 ms there, against 30 ms for the tables' quick checks).
pub const QUICK_CHECK_BYTES: u64 = 8 << 20;

/// Why a connection attempt failed: damage is cured by quarantine, anything else is reported.
enum Attempt {
    Damaged,
    Failed(StoreError),
}

impl From<StoreError> for Attempt {
    fn from(e: StoreError) -> Attempt {
        match e {
            StoreError::Corrupt => Attempt::Damaged,
            e => Attempt::Failed(e),
        }
    }
}

impl From<rusqlite::Error> for Attempt {
    fn from(e: rusqlite::Error) -> Attempt {
        StoreError::from(e).into()
    }
}

impl Store {
    /// Where the projection lives under the cache root: `<cache root>/history-search/v1.sqlite`.
    pub fn path(cache_root: &Path) -> PathBuf {
        cache_root.join("history-search").join("v1.sqlite")
    }

    /// Opens the database at `path` with [`Check::Schema`]; see [`Store::open_with`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, Check::Schema)
    }

    /// Opens the database at `path` for a query, which only reads: one read-only connection
    /// when the file is this build's database and has every table, else as [`Store::open`]
    /// does (which creates, upgrades or moves aside). A read-only connection never writes
    /// the database, not even the write-ahead log into it as it closes, and costs one
    /// connection where [`Store::open`] makes two (0.6 ms of a query's 11).
    pub fn open_to_read(path: &Path) -> Result<Store, StoreError> {
        let ready = Store::connect_degraded(path, SCHEMA_VERSION)
            .ok()
            .filter(|store| {
                let pragma = |name: &str| {
                    (store.conn)
                        .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
                        .ok()
                };
                pragma("user_version") == Some(SCHEMA_VERSION)
                    && pragma("application_id") == Some(schema::APPLICATION_ID)
                    && store.has_tables().unwrap_or(false)
            });
        match ready {
            Some(store) => Ok(store),
            None => Store::open(path),
        }
    }

    /// Opens the database at `path`, creating its directory (0700) and file (0600) as needed.
    ///
    /// An empty file gets schema v1. A file that is not this projection's database, is damaged
    /// (as far as `check` looks) or lacks a table of its schema version is quarantined (see
    /// [`Store::quarantine`]) and replaced by an empty database. A newer schema version is
    /// opened read-only. Errors: the directory is unusable, on a network filesystem, or a
    /// symbolic link; a database file is a link or not a regular file; the database is busy
    /// beyond the timeout; SQLite fails otherwise.
    pub fn open_with(path: &Path, check: Check) -> Result<Store, StoreError> {
        let dir = path.parent().ok_or(StoreError::Directory {
            code: "not_creatable",
        })?;
        place::prepare_dir(dir)?;
        let mut quarantined = None;
        loop {
            place::prepare_file(path)?;
            if check != Check::Schema && damage::noted(path) && quarantined.is_none() {
                quarantined = Some(Store::quarantine(path)?);
                continue;
            }
            match Store::connect(path, check) {
                Ok(mut store) => {
                    store.moved_aside = quarantined;
                    return Ok(store);
                }
                Err(Attempt::Damaged) if quarantined.is_none() => {
                    quarantined = Some(Store::quarantine(path)?);
                }
                Err(Attempt::Damaged) => return Err(StoreError::Corrupt),
                Err(Attempt::Failed(e)) => return Err(e),
            }
        }
    }

    /// Moves the database at `path` and its companion files aside as
    /// `<name>.quarantined-<unix time>` (with `-wal`, `-shm`), keeping the two newest such
    /// quarantines; returns the new name. For damage met after opening: drop the store first.
    pub fn quarantine(path: &Path) -> Result<PathBuf, StoreError> {
        let moved = place::quarantine(path)?;
        damage::clear(path);
        Ok(moved)
    }

    /// Moves this damaged database aside and opens an empty one in its place: for damage met
    /// after opening, by an update that then builds it again.
    pub fn start_over(self) -> Result<Store, StoreError> {
        let path = self.path.clone();
        drop(self);
        let moved = Store::quarantine(&path)?;
        let mut store = Store::open(&path)?;
        store.moved_aside = Some(moved);
        Ok(store)
    }

    /// `false` in degraded mode, when the database has a newer schema than this build (then
    /// reads work as far as the schema allows and every write is [`StoreError::Degraded`]), and
    /// when it was opened to read ([`Store::open_to_read`]).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Starts a read transaction: every read from here on sees the database as it is now, whatever
    /// an update commits meanwhile, until the store is dropped. Without it each statement reads
    /// the newest state, and a query whose statements straddle an update's commit could pair
    /// one state's sessions with another's lines.
    pub fn begin_read(&self) -> Result<(), StoreError> {
        if !self.conn.is_autocommit() {
            return Ok(()); // already in one
        }
        self.conn.execute_batch("BEGIN DEFERRED")?;
        // The snapshot is taken by the first read, here, rather than by whichever comes next.
        self.conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
        Ok(())
    }

    /// Ends the read transaction [`Store::begin_read`] started, if any.
    pub fn end_read(&self) -> Result<(), StoreError> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// Where opening this store moved a damaged database aside, to start afresh.
    pub fn moved_aside(&self) -> Option<&Path> {
        self.moved_aside.as_deref()
    }

    /// The database file this store has open, to tell later whether it is still there.
    pub fn place(&self) -> Place {
        self.place.clone()
    }

    /// Removes every session at once, with every token list.
    pub fn clear(&mut self) -> Result<(), StoreError> {
        let (tx, _) = self.write_transaction()?;
        tx.execute_batch(
            "DELETE FROM postings;
             DELETE FROM words;
             DELETE FROM segments;
             DELETE FROM ranges;
             DELETE FROM lines;
             DELETE FROM gone;
             DELETE FROM witnesses;
             DELETE FROM sessions;",
        )?;
        tx.commit()?;
        // The pages the old index took go back to the file system: emptied, it is cheap to do.
        Ok(self.conn.execute_batch("VACUUM")?)
    }

    /// Merges the newest token segments when there are many, or all of them when many of their
    /// lines are gone ([`postings`]); whether it merged.
    pub fn compact(&mut self) -> Result<bool, StoreError> {
        let (tx, _) = self.write_transaction()?;
        let merged = postings::compact(&tx)?;
        tx.commit()?;
        if merged {
            // A merge writes its segment before it frees the ones it replaces: give the freed
            // pages back, or the file keeps twice the lists' size. The statement frees a page
            // per step.
            let mut vacuum = self.conn.prepare("PRAGMA incremental_vacuum")?;
            let mut steps = vacuum.query([])?;
            while steps.next()?.is_some() {}
        }
        Ok(merged)
    }

    /// Copies the write-ahead log into the database and empties it, so that what an update
    /// wrote does not linger in the log for every reader to map.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        if self.writable {
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        Ok(())
    }

    /// The database file.
    pub fn file(&self) -> &Path {
        &self.path
    }

    /// The database's schema version.
    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    fn connect(path: &Path, check: Check) -> Result<Store, Attempt> {
        // A newer build's database is only ever opened read-only, from the first connection on:
        // a writable one folds a pending write-ahead log into the file as it closes.
        let newer = Store::connect_degraded(path, SCHEMA_VERSION)?;
        let version: i64 = newer
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let app: i64 = newer
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION && app == schema::APPLICATION_ID {
            return Ok(Store {
                schema_version: version,
                ..newer
            });
        }
        drop(newer);
        // No CREATE flag: the file was created 0600 beforehand, and SQLite would create a
        // missing one with the process's umask.
        let flags =
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NOFOLLOW | no_mutex();
        let conn = Connection::open_with_flags(path, flags)?;
        prepare_connection(&conn)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION && app == schema::APPLICATION_ID {
            // A newer build took it over since it was looked at: not this one's to touch.
            return Err(Attempt::Failed(StoreError::Busy));
        }
        if version != 0 && app != schema::APPLICATION_ID {
            return Err(Attempt::Damaged);
        }
        if version == 0 {
            // Only an empty database takes it; outside a transaction, before the first write.
            conn.execute_batch(schema::PAGES)?;
        }
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Attempt::Failed(StoreError::Sqlite {
                code: 0,
                extended: 0,
            }));
        }
        conn.execute_batch(&format!(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
             PRAGMA journal_size_limit = {};",
            schema::JOURNAL_SIZE_LIMIT
        ))?;
        let mut store = Store {
            conn,
            acc: None,
            path: path.to_path_buf(),
            place: Place::of(path),
            moved_aside: None,
            writable: true,
            schema_version: version,
            unchecked: std::cell::Cell::new(false),
            census: std::cell::RefCell::default(),
        };
        if version == 0 {
            store.create_schema()?;
        } else if version < SCHEMA_VERSION {
            store.upgrade()?;
        } else if !store.has_tables()? {
            return Err(Attempt::Damaged);
        }
        let sound = match check {
            Check::Schema => true,
            Check::Update => store.checked_on_update()?,
            Check::Deep => store.checked_deep()?,
        };
        if !sound {
            return Err(Attempt::Damaged);
        }
        Ok(store)
    }

    /// What opens a second, read-only connection to this database: for reads on another
    /// thread (a connection is not shared between threads).
    pub fn reader(&self) -> Reader {
        Reader {
            path: self.path.clone(),
            schema_version: self.schema_version,
        }
    }

    fn connect_degraded(path: &Path, version: i64) -> Result<Store, Attempt> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW | no_mutex();
        let conn = Connection::open_with_flags(path, flags)?;
        prepare_connection(&conn)?;
        conn.execute_batch("PRAGMA query_only = ON;")?;
        Ok(Store {
            conn,
            acc: None,
            path: path.to_path_buf(),
            place: Place::of(path),
            moved_aside: None,
            writable: false,
            schema_version: version,
            unchecked: std::cell::Cell::new(false),
            census: std::cell::RefCell::default(),
        })
    }

    /// Creates the schema in an empty database. Two processes may race to it: the immediate
    /// transaction serializes them and the loser finds the version set.
    fn create_schema(&mut self) -> Result<(), Attempt> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == 0 {
            let objects: i64 =
                tx.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
            if objects != 0 {
                // Someone else's database without a version: not ours to write into.
                return Err(Attempt::Damaged);
            }
            tx.execute_batch(schema::SCHEMA)?;
            tx.execute_batch(catalog::TRIGGERS)?;
            tx.execute_batch(&format!(
                "PRAGMA application_id = {}; PRAGMA user_version = {SCHEMA_VERSION};",
                schema::APPLICATION_ID
            ))?;
        }
        tx.commit()?;
        self.schema_version = SCHEMA_VERSION;
        if version > SCHEMA_VERSION {
            return Err(Attempt::Failed(StoreError::Busy));
        }
        Ok(())
    }

    /// Replaces an older version's schema, and everything in it, with this one's: the
    /// projection is rebuilt from the transcripts rather than migrated.
    fn upgrade(&mut self) -> Result<(), Attempt> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version < SCHEMA_VERSION {
            tx.execute_batch(&format!(
                "DROP TRIGGER IF EXISTS lines_gone; DROP TABLE IF EXISTS grams;
                 DROP TABLE IF EXISTS catalog; DROP TABLE IF EXISTS words;
                 DROP TABLE IF EXISTS postings; DROP TABLE IF EXISTS segments;
                 DROP TABLE IF EXISTS gone; DROP TABLE IF EXISTS ranges;
                 DROP TABLE IF EXISTS resumes;
                 DROP TABLE IF EXISTS lines; DROP TABLE IF EXISTS witnesses;
                 DROP TABLE IF EXISTS sessions;
                 {}
                 {}
                 PRAGMA user_version = {SCHEMA_VERSION};",
                schema::SCHEMA,
                catalog::TRIGGERS,
            ))?;
        }
        tx.commit()?;
        if version < SCHEMA_VERSION {
            self.conn.execute_batch(schema::PAGES)?;
            self.conn.execute_batch("VACUUM")?;
        }
        self.schema_version = SCHEMA_VERSION;
        Ok(())
    }

    fn has_tables(&self) -> Result<bool, rusqlite::Error> {
        let names: Vec<String> = (1..=schema::TABLES.len())
            .map(|i| format!("?{i}"))
            .collect();
        let mut stmt = self.conn.prepare(&format!(
            "SELECT count(*) FROM sqlite_schema WHERE name IN ({})",
            names.join(", ")
        ))?;
        let n: i64 = stmt.query_row(schema::TABLES, |r| r.get(0))?;
        Ok(n == schema::TABLES.len() as i64)
    }

    /// Whether `pragma` (a check) finds nothing wrong.
    fn check_finds_nothing(&self, pragma: &str) -> Result<bool, rusqlite::Error> {
        let mut stmt = self.conn.prepare(pragma)?;
        let mut rows = stmt.query([])?;
        let first: Option<String> = match rows.next()? {
            Some(row) => Some(row.get(0)?),
            None => None,
        };
        Ok(first.as_deref() == Some("ok"))
    }

    /// [`Check::Update`] past the schema: the tables every query reads whole, or the whole of a
    /// small database, its indexes against its tables included.
    fn checked_on_update(&self) -> Result<bool, Attempt> {
        let len = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        if len <= QUICK_CHECK_BYTES {
            return Ok(self.check_finds_nothing("PRAGMA integrity_check")?);
        }
        self.unchecked.set(true);
        Ok(true)
    }

    /// The tables [`Check::Update`] left to check before the first write, checked; damage
    /// there is [`StoreError::Corrupt`], as met by the write.
    fn check_before_writing(&self) -> Result<(), StoreError> {
        if !self.unchecked.replace(false) {
            return Ok(());
        }
        for table in ["sessions", "witnesses", "segments", "resumes"] {
            if !self.check_finds_nothing(&format!("PRAGMA quick_check({table})"))? {
                return Err(StoreError::Corrupt);
            }
        }
        Ok(())
    }

    /// [`Check::Deep`] past the schema: the structure of everything, then every row's sum.
    fn checked_deep(&self) -> Result<bool, Attempt> {
        if !self.check_finds_nothing("PRAGMA integrity_check")? {
            return Ok(false);
        }
        let tables = [
            ("sessions", sum::SESSION),
            ("witnesses", sum::WITNESS),
            ("lines", sum::LINE),
            ("resumes", sum::RESUME),
            ("segments", sum::SEGMENT),
            ("ranges", ranges::COLUMNS),
        ];
        for (table, columns) in tables {
            let broken: i64 = self.conn.query_row(
                &format!(
                    "SELECT count(*) FROM {table} t WHERE NOT ({})",
                    sum::checked("t", columns)
                ),
                [],
                |r| r.get(0),
            )?;
            if broken != 0 {
                return Ok(false);
            }
        }
        postings::verify(&self.conn)?;
        Ok(catalog::agrees(&self.conn, &self.census_of_tables()?)?)
    }

    /// Notes beside the database that a read met damage in it, for the next update to move it
    /// aside ([`Check::Update`]) and rebuild. Only for the file this store opened: a note about
    /// a database since replaced is ignored. A database of a newer schema is never noted: it is never moved aside.
    pub fn note_damage(&self) {
        if self.schema_version <= SCHEMA_VERSION {
            damage::note(&self.path, &self.place);
        }
    }

    /// Writes the catalog ([`catalog`]) when the tables have changed since it was last
    /// written: what an update does when it ends, so that queries read the sessions in one value.
    pub fn seal_catalog(&mut self) -> Result<(), StoreError> {
        if !self.writable {
            return Err(StoreError::Degraded);
        }
        // Unchecked: the census below is read through the same connection, inside it.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let present: bool = tx.query_row("SELECT count(*) FROM catalog", [], |r| r.get(0))?;
        if !present {
            self.check_before_writing()?;
            catalog::write(&tx, &self.census_of_tables()?)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// A write transaction, with the gatherer of the tokens of the lines it writes, which
    /// [`commit`] stores.
    fn write_transaction(
        &mut self,
    ) -> Result<(rusqlite::Transaction<'_>, &mut postings::Accumulator), StoreError> {
        if !self.writable {
            return Err(StoreError::Degraded);
        }
        self.check_before_writing()?;
        // Immediate: take the write lock up front, so a busy database fails before any work.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let acc = self.acc.get_or_insert_with(Box::default);
        acc.reset(postings::id_floor(&tx)?);
        Ok((tx, acc))
    }

    /// Stores `record` as indexed with exactly `lines`, replacing whatever the session had.
    pub fn replace_session(
        &mut self,
        record: &SessionRecord,
        lines: &[LineRecord<'_>],
    ) -> Result<(), StoreError> {
        let (tx, acc) = self.write_transaction()?;
        write::replace(&tx, acc, record, lines)?;
        commit(tx, acc)
    }

    /// A transaction for many sessions, written line by line so that a session's lines never
    /// need to be in memory at once ([`Batch::session`]). Nothing of it is stored before
    /// [`Batch::commit`]: killing the process leaves the store as it was before the batch.
    pub fn batch(&mut self) -> Result<Batch<'_>, StoreError> {
        let (tx, acc) = self.write_transaction()?;
        Ok(Batch { tx, acc })
    }

    /// Adds `lines`, read from the witnesses' old checkpoints on, to an indexed session, and
    /// stores `witnesses` (the same files, in the same order) with their new fingerprints and
    /// checkpoints. Errors: the session is not indexed ([`StoreError::NotIndexed`]), the
    /// witnesses are other files ([`StoreError::WitnessMismatch`]), a line's seq is not after
    /// every stored one or names no witness ([`StoreError::InvalidLine`]).
    pub fn append_lines(
        &mut self,
        key: &SessionKey,
        witnesses: &[Witness],
        lines: &[LineRecord<'_>],
    ) -> Result<(), StoreError> {
        let (tx, acc) = self.write_transaction()?;
        write::append(&tx, acc, key, witnesses, lines)?;
        commit(tx, acc)
    }

    /// Records that the session could not be indexed, for `reason` (a code of `[a-z0-9_]`,
    /// such as `too_large`, `unreadable`, `undecodable`), dropping any lines it had: nothing
    /// from an older checkpoint may be served. The witnesses tell when to try again.
    pub fn record_failure(
        &mut self,
        record: &SessionRecord,
        reason: &str,
    ) -> Result<(), StoreError> {
        let (tx, _) = self.write_transaction()?;
        write::failure(&tx, record, reason)?;
        Ok(tx.commit()?)
    }

    /// Removes the session and all it had; `true` if it was stored.
    pub fn remove_session(&mut self, key: &SessionKey) -> Result<bool, StoreError> {
        let (tx, _) = self.write_transaction()?;
        let removed = write::remove(&tx, key)?;
        tx.commit()?;
        Ok(removed)
    }

    /// Removes every session for which `keep(key, root path)` is `false` (its files are gone,
    /// or it is to be reindexed); returns how many. One transaction for all of them.
    pub fn retain_sessions(
        &mut self,
        keep: impl FnMut(&SessionKey, &Path) -> bool,
    ) -> Result<usize, StoreError> {
        let (tx, _) = self.write_transaction()?;
        let removed = write::retain(&tx, keep)?;
        tx.commit()?;
        Ok(removed)
    }
}

/// Sessions being written in one transaction ([`Store::batch`]).
pub struct Batch<'a> {
    tx: rusqlite::Transaction<'a>,
    acc: &'a mut postings::Accumulator,
}

impl Batch<'_> {
    /// Starts replacing `record`'s session with the lines the writer is then given; the session
    /// is kept by [`SessionWriter::commit`], and dropping the writer leaves it as it was.
    pub fn session(&mut self, record: &SessionRecord) -> Result<SessionWriter<'_>, StoreError> {
        let sp = self.tx.savepoint()?;
        let id = write::upsert(&sp, record, None)?;
        write::clear(&sp, id)?;
        write::put_witnesses(&sp, id, &record.witnesses)?;
        Ok(SessionWriter {
            sp,
            acc: &mut *self.acc,
            id,
            files: record.witnesses.len(),
            last: None,
            range: None,
        })
    }

    /// Starts extending `record`'s session, indexed from files that have since grown: its
    /// stored lines stay unless the writer removes or replaces them.
    pub fn extend(&mut self, record: &SessionRecord) -> Result<SessionWriter<'_>, StoreError> {
        let sp = self.tx.savepoint()?;
        let id = write::upsert(&sp, record, None)?;
        sp.prepare_cached("DELETE FROM witnesses WHERE session = ?1")?
            .execute([id])?;
        write::put_witnesses(&sp, id, &record.witnesses)?;
        Ok(SessionWriter {
            sp,
            acc: &mut *self.acc,
            id,
            files: record.witnesses.len(),
            last: None,
            range: None,
        })
    }

    /// [`Store::record_failure`] within the batch.
    pub fn record_failure(
        &mut self,
        record: &SessionRecord,
        reason: &str,
    ) -> Result<(), StoreError> {
        write::failure(&self.tx, record, reason)
    }

    /// Whether the tokens gathered take enough memory to be stored now ([`Batch::commit`]).
    pub fn should_flush(&self) -> bool {
        self.acc.bytes() >= postings::FLUSH_BYTES
    }

    /// Stores every session the batch kept.
    pub fn commit(self) -> Result<(), StoreError> {
        commit(self.tx, self.acc)
    }
}

/// A session being written within a [`Batch`].
pub struct SessionWriter<'a> {
    sp: rusqlite::Savepoint<'a>,
    acc: &'a mut postings::Accumulator,
    id: i64,
    files: usize,
    last: Option<i64>,
    /// The ids and times of the lines written.
    range: Option<ranges::IdRange>,
}

impl SessionWriter<'_> {
    /// Adds one line; its seq must exceed the previous line's.
    pub fn line(&mut self, line: &LineRecord<'_>) -> Result<(), StoreError> {
        let written = write::put_lines(
            &self.sp,
            self.acc,
            self.id,
            self.files,
            self.last,
            std::slice::from_ref(line),
        )?;
        self.range = write::joined(self.range, written);
        self.last = Some(int(line.seq));
        Ok(())
    }

    /// Marks each line at a seq as on the session's selected branch or off it.
    pub fn mark_branch(&mut self, marks: &[(u64, bool)]) -> Result<(), StoreError> {
        // The new sum in the same step (the columns but `branch` as they are, `branch` as set),
        // of a line whose old sum holds: damage is found, never sealed anew. Every mark is of a
        // line the session has.
        let mut update = self.sp.prepare_cached(&format!(
            "UPDATE lines SET branch = ?3, sum = row_sum({}) WHERE session = ?1 AND seq = ?2
             AND sum = row_sum({})",
            sum::LINE.replace("branch", "?3"),
            sum::LINE
        ))?;
        for &(seq, on) in marks {
            if update.execute(params![self.id, int(seq), on])? != 1 {
                return Err(StoreError::Corrupt);
            }
        }
        Ok(())
    }

    /// Records what the session is about with its decode's notices ([`StoredMeta`]), and
    /// whether its decode left a file it inherits from unread
    /// ([`history_core::Decoded::lineage_open`]).
    pub fn set_meta(
        &mut self,
        meta: &SessionMeta,
        notices: &[String],
        lineage_open: bool,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(&StoredMeta {
            meta: meta.clone(),
            notices: notices.to_vec(),
        })
        .unwrap_or_default();
        self.sp
            .prepare_cached("UPDATE sessions SET meta = ?2, lineage_open = ?3 WHERE id = ?1")?
            .execute(params![self.id, json, lineage_open])?;
        write::reseal_session(&self.sp, self.id)
    }

    /// Removes the lines after `seq`, with their tokens: those a decode that goes on from a
    /// snapshot settled at `seq` gives again.
    pub fn remove_lines_after(&mut self, seq: u64) -> Result<(), StoreError> {
        self.sp
            .prepare_cached("DELETE FROM lines WHERE session = ?1 AND seq > ?2")?
            .execute(params![self.id, int(seq)])?;
        Ok(())
    }

    /// Moves the checkpoint of the session's own file (witness 0) to where its decode stopped,
    /// short of a last line still being written.
    pub fn set_checkpoint(&mut self, checkpoint: u64, hash: u64) -> Result<(), StoreError> {
        self.sp
            .prepare_cached(
                "UPDATE witnesses SET checkpoint = ?2, checkpoint_hash = ?3
                 WHERE session = ?1 AND ordinal = 0",
            )?
            .execute(params![self.id, int(checkpoint), hash as i64])?;
        self.sp
            .prepare_cached(
                "UPDATE sessions SET bytes = (SELECT sum(checkpoint) FROM witnesses
                 WHERE session = ?1) WHERE id = ?1",
            )?
            .execute([self.id])?;
        self.sp
            .prepare_cached(&sum::reseal(
                "witnesses",
                sum::WITNESS,
                "WHERE session = ?1 AND ordinal = 0",
            ))?
            .execute([self.id])?;
        write::reseal_session(&self.sp, self.id)
    }

    /// Records where a decode of the session stopped; `None`: it cannot go on from there.
    pub fn set_resume(&mut self, snapshot: Option<&Snapshot>) -> Result<(), StoreError> {
        match snapshot {
            Some(s) => self
                .sp
                .prepare_cached(
                    "INSERT OR REPLACE INTO resumes (session, offset, lines, settled, state, sum)
                 VALUES (?1, ?2, ?3, ?4, ?5, row_sum(?1, ?2, ?3, ?4, ?5))",
                )?
                .execute(params![
                    self.id,
                    int(s.offset),
                    int(s.lines),
                    int(s.settled),
                    s.state
                ])?,
            None => self
                .sp
                .prepare_cached("DELETE FROM resumes WHERE session = ?1")?
                .execute([self.id])?,
        };
        Ok(())
    }

    /// Removes the line at `seq`, if the session has one, with its tokens.
    pub fn remove_line(&mut self, seq: u64) -> Result<(), StoreError> {
        self.sp
            .prepare_cached("DELETE FROM lines WHERE session = ?1 AND seq = ?2")?
            .execute(params![self.id, int(seq)])?;
        Ok(())
    }

    /// Leaves the session as it was before the writer started: its lines are taken back, and
    /// their ids, which the batch's token lists already hold, are recorded as removed lines'
    /// (a token list's id that is neither a line nor a removed one is damage). Dropping a writer
    /// instead is for a batch that is dropped too.
    pub fn abandon(mut self) -> Result<(), StoreError> {
        self.sp.rollback()?;
        if let Some(range) = self.range.take() {
            let mut gone = self
                .sp
                .prepare_cached("INSERT OR IGNORE INTO gone (id) VALUES (?1)")?;
            for id in range.first..=range.last {
                gone.execute([id])?;
            }
        }
        Ok(self.sp.commit()?)
    }

    /// Keeps the session in the batch.
    pub fn commit(self) -> Result<(), StoreError> {
        if let Some(range) = &self.range {
            ranges::put(&self.sp, self.id, range)?;
        }
        Ok(self.sp.commit()?)
    }
}

/// Stores the tokens `acc` gathered and commits `tx`.
fn commit(
    tx: rusqlite::Transaction<'_>,
    acc: &mut postings::Accumulator,
) -> Result<(), StoreError> {
    postings::flush(&tx, acc)?;
    Ok(tx.commit()?)
}

/// What every connection needs before its first statement: a short busy timeout, the `rarray`
/// table of id lists, the row checksum function ([`sum`]), and SQLite's own check of each page's cells
/// as it reads them (damage there is then an error, not a wrong row). And the query planner's
/// stability guarantee: without it a statement whose parameter the planner compared with an
/// expression is prepared again each time a new value is bound (a session looked up by its key,
/// say), which took a quarter of the time of reading 20,000 sessions one at a time (7.1 s, then
/// 2.4 s); no plan here depends on a bound value.
fn prepare_connection(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.busy_timeout(Duration::from_millis(schema::BUSY_TIMEOUT_MS))?;
    rusqlite::vtab::array::load_module(conn)?;
    sum::register(conn)?;
    conn.execute_batch("PRAGMA cell_size_check = ON;")
}

/// Each store has its own connection used from one thread at a time; SQLite's own mutexes
/// would only cost time.
fn no_mutex() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_NO_MUTEX
}
