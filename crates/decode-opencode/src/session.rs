//! A session as OpenCode stores it, whichever store it came from: its row and its messages,
//! each with its parts, in OpenCode's order.

use serde_json::{Map, Value};

/// A session's row (`session` table, or `storage/session/<project>/<id>.json`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) parent: Option<String>,
    pub(crate) directory: Option<String>,
    pub(crate) title: Option<String>,
    /// Milliseconds since the epoch.
    pub(crate) updated: Option<i64>,
    /// `revert.messageID`: the first message an undo hid.
    pub(crate) reverted_from: Option<String>,
}

impl Row {
    /// The row from its fields by name: the table's columns, or the legacy JSON's keys
    /// (`parentID`, `time.updated`).
    pub(crate) fn from_fields(fields: &Map<String, Value>) -> Option<Row> {
        let text = |key: &str| {
            fields
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let revert = match fields.get("revert") {
            Some(Value::String(json)) => serde_json::from_str(json).ok(),
            Some(v @ Value::Object(_)) => Some(v.clone()),
            _ => None,
        };
        let updated = fields
            .get("time_updated")
            .or_else(|| fields.get("time").and_then(|t| t.get("updated")))
            .and_then(millis);
        Some(Row {
            id: text("id")?,
            parent: text("parent_id").or_else(|| text("parentID")),
            directory: text("directory"),
            title: text("title"),
            updated,
            reverted_from: revert
                .as_ref()
                .and_then(|r| r.get("messageID"))
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// One message and its parts, in order.
#[derive(Clone, Debug)]
pub(crate) struct Message {
    pub(crate) id: String,
    /// The message's `data` (`MessageV2.Info`); `None` when it is not a JSON object.
    pub(crate) info: Option<Map<String, Value>>,
    /// Each part's id and `data`; `None` for one that is not a JSON object.
    pub(crate) parts: Vec<(String, Option<Map<String, Value>>)>,
}

/// A number of milliseconds, integral or not.
pub(crate) fn millis(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)),
        _ => None,
    }
}

/// A JSON object in text; `None` for anything else.
pub(crate) fn object(text: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}
