//! An `opencode*.db` opened in memory from its image ([`crate::image`]): its sessions and each
//! one's messages and parts.

use std::path::Path;

use history_core::DecodeError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use crate::image::{self, Files};
use crate::session::{object, Message, Row};

/// One database, as its files were when it was read.
pub(crate) struct Database {
    conn: Connection,
    pub(crate) files: Files,
}

impl Database {
    /// Reads the database at `path` (with its log) into memory.
    pub(crate) fn open(path: &Path) -> Result<Database, DecodeError> {
        let (image, files) = image::read(path)?;
        let invalid = |e: rusqlite::Error| DecodeError::Invalid(format!("{}: {e}", path.display()));
        // An in-memory database of SQLite's own: no file is named, so none is opened.
        let mut conn = Connection::open_with_flags(
            ":memory:",
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(invalid)?;
        let len = image.len();
        conn.deserialize_read_exact(rusqlite::MAIN_DB, &image[..], len, true)
            .map_err(invalid)?;
        // A damaged image is found out here rather than half-way through a session.
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
            .map_err(invalid)?;
        Ok(Database { conn, files })
    }

    /// Every session row, by its columns' names.
    pub(crate) fn sessions(&self) -> Result<Vec<Row>, rusqlite::Error> {
        let mut stmt = self.conn.prepare("SELECT * FROM session")?;
        let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
        let rows = stmt.query_map([], |r| {
            let mut fields = Map::new();
            for (i, name) in names.iter().enumerate() {
                fields.insert(name.clone(), json(r.get_ref(i)?));
            }
            Ok(fields)
        })?;
        let mut out = Vec::new();
        for fields in rows {
            out.extend(Row::from_fields(&fields?));
        }
        Ok(out)
    }

    /// One session's row.
    pub(crate) fn session(&self, id: &str) -> Result<Option<Row>, rusqlite::Error> {
        Ok(self.sessions()?.into_iter().find(|r| r.id == id))
    }

    /// A session's messages by `(time_created, id)`, each with its parts by `id`.
    pub(crate) fn messages(&self, session: &str) -> Result<Vec<Message>, rusqlite::Error> {
        let mut stmt = self.conn.prepare(
            "SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id",
        )?;
        let mut messages: Vec<Message> = stmt
            .query_map([session], |r| {
                Ok(Message {
                    id: r.get::<_, String>(0)?,
                    info: text(r.get_ref(1)?).and_then(object),
                    parts: Vec::new(),
                })
            })?
            .collect::<Result<_, _>>()?;
        let at: std::collections::HashMap<String, usize> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.clone(), i))
            .collect();
        let mut stmt = self.conn.prepare(
            "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id",
        )?;
        let parts = stmt.query_map([session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                text(r.get_ref(2)?).and_then(object),
            ))
        })?;
        for part in parts {
            let (id, message, data) = part?;
            if let Some(&i) = at.get(&message) {
                messages[i].parts.push((id, data));
            }
        }
        Ok(messages)
    }
}

fn text(v: ValueRef<'_>) -> Option<&str> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => std::str::from_utf8(t).ok(),
        _ => None,
    }
}

fn json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(_) | ValueRef::Blob(_) => text(v).map_or(Value::Null, Value::from),
    }
}
