//! Which project a recording belongs to: `<geminiTmp>/<project>/chats/…`, where `<project>` is
//! a short name that `projects.json` maps from the project root (since February 2026), or the
//! SHA-256 of the root before that. `<project>/.project_root` holds the root too.

use std::path::{Path, PathBuf};

use history_core::open_untouched;
use serde_json::Value;

/// Where a recording sits: the project directory under `tmp/`, and the parent session's id
/// when it is a sub-agent's (`chats/<parent id>/<id>.jsonl`).
pub(crate) struct Place {
    pub(crate) project: PathBuf,
    pub(crate) parent: Option<String>,
}

/// The place of a recording under `<root>/tmp/<project>/chats/`.
pub(crate) fn place(path: &Path) -> Option<Place> {
    let dir = path.parent()?;
    if dir.file_name()? == "chats" {
        return Some(Place {
            project: dir.parent()?.to_path_buf(),
            parent: None,
        });
    }
    let chats = dir.parent()?;
    if chats.file_name()? != "chats" {
        return None;
    }
    Some(Place {
        project: chats.parent()?.to_path_buf(),
        parent: dir.file_name().and_then(|n| n.to_str()).map(str::to_string),
    })
}

/// The project root of a recording: the root `projects.json` maps to its project's name, else
/// the path in the project's `.project_root`.
pub(crate) fn root_of(home: &Path, path: &Path) -> Option<String> {
    let project = place(path)?.project;
    let name = project.file_name()?.to_str()?;
    registered(home, name).or_else(|| marker(&project))
}

fn registered(home: &Path, name: &str) -> Option<String> {
    let bytes = read_small(&home.join("projects.json"))?;
    let Value::Object(doc) = serde_json::from_slice(&bytes).ok()? else {
        return None;
    };
    let Some(Value::Object(projects)) = doc.get("projects") else {
        return None;
    };
    projects
        .iter()
        .filter(|(_, short)| short.as_str() == Some(name))
        .map(|(root, _)| root.clone())
        .min()
}

fn marker(project: &Path) -> Option<String> {
    let bytes = read_small(&project.join(".project_root"))?;
    let text = String::from_utf8(bytes).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// A small file's bytes (these files hold a path or a table of them).
fn read_small(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_untouched(path)
        .ok()?
        .take(16 * 1024 * 1024)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}
