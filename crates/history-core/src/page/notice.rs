//! What a page says besides its items: the notices every page kind writes the same way.

use crate::error::HistoryError;

/// The notice that `n` sessions were read because the search index does not hold them.
pub(crate) fn unindexed(n: usize) -> String {
    format!(
        "{n} session{} not in the search index {} read in full",
        if n == 1 { "" } else { "s" },
        if n == 1 { "was" } else { "were" },
    )
}

/// The notices, joined into one; `None` for none.
pub(crate) fn joined(notices: &[String]) -> Option<String> {
    (!notices.is_empty()).then(|| notices.join("; "))
}

/// The notice that counts the sessions a wildcard result skipped, naming the first three.
pub(crate) fn skipped(skipped: &[HistoryError]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let names: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|e| match e {
            HistoryError::HistoryUnavailable { session, reason } => format!("{session}: {reason}"),
            other => other.to_string(),
        })
        .collect();
    let one = skipped.len() == 1;
    Some(format!(
        "{} session{} could not be loaded and {} skipped ({}{})",
        skipped.len(),
        if one { "" } else { "s" },
        if one { "was" } else { "were" },
        names.join("; "),
        if skipped.len() > 3 { "; …" } else { "" }
    ))
}
