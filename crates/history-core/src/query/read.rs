//! The page of one event (`read`): its text from a character offset on, cut to the budget, with
//! the recipe that reads on where the cut falls and one for the events around it.

use crate::corpus::Keep;
use crate::error::HistoryError;
use crate::model::{Event, SessionFile};
use crate::page::budget::fit_read;
use crate::page::{notice, Item, ReadPage, Recipe, Render, SCHEMA_VERSION};
use crate::query::{ReadRequest, Scope, SessionEvents};

/// The size of a transcript from which one event is read from its line through the projection
/// rather than by a decode of the session: a smaller one decodes in less time than the
/// projection takes to check that it holds the session as it is.
const LINE_READ: u64 = 256 << 10;

/// The event `req` names of the session in `file`, as a page fitted to its budget as `render`
/// renders it. `implicit`: the session is the caller's current one, named by nobody.
pub(crate) fn read_page(
    scope: &Scope<'_>,
    req: &ReadRequest,
    file: &SessionFile,
    implicit: bool,
    render: &dyn Render,
) -> Result<ReadPage, HistoryError> {
    let seq = req.seq;
    let keep = |e: &Event| {
        if e.seq == seq {
            Keep::Full
        } else {
            Keep::Drop
        }
    };
    // A large session's line is read alone where the projection holds the session as it is.
    let from_line = (scope.projection)
        .filter(|_| file.size >= LINE_READ)
        .and_then(|p| p.lines(scope.corpus, file, &[seq]));
    let (loaded, location) = match from_line {
        Some((line, mut locations)) => (line, locations.pop().flatten()),
        None => {
            let loaded = scope.corpus.load(file, &keep, true, None)?;
            let events = SessionEvents {
                events: loaded.events,
                meta: loaded.meta,
                notices: loaded.notices,
            };
            (events, None)
        }
    };
    let parts = loaded.events.len() as u32;
    let event = loaded.events.into_iter().find(|e| e.part == req.part);
    let canonical = file.key.to_string();
    let session = (!implicit).then(|| canonical.clone());
    let mut item = event.map(|e| {
        Item::new(canonical.clone(), Some(file.path.display().to_string()), e).about(&loaded.meta)
    });
    if let Some(item) = item.as_mut() {
        if scope.locations {
            item.location = location;
        }
        scope.fill(std::slice::from_mut(item), &[file]);
    }
    let total_chars = item.as_ref().map_or(0, |i| i.event.text.chars().count());
    if item.is_some() && req.offset_chars > total_chars {
        return Err(HistoryError::usage(format!(
            "--offset-chars {} is past the end of the event's text ({total_chars} characters)",
            req.offset_chars
        )));
    }
    if let Some(item) = item.as_mut() {
        item.event.text = item.event.text.chars().skip(req.offset_chars).collect();
    }
    let mut page = ReadPage {
        schema_version: SCHEMA_VERSION,
        session: canonical,
        item,
        parts,
        offset_chars: req.offset_chars,
        next_offset_chars: None,
        next: None,
        neighborhood: Recipe {
            session: session.clone(),
            after_seq: Some(seq.saturating_sub(10)),
            ..Recipe::default()
        },
        notice: notice::joined(&loaded.notices),
        implicit,
    };
    if let Some(shown) = fit_read(&mut page, render, req.budget) {
        let next = req.offset_chars + shown;
        page.next = None;
        if next < total_chars {
            page.next_offset_chars = Some(next);
            page.next = Some(Recipe {
                session,
                seq: Some(seq),
                part: Some(req.part),
                offset_chars: Some(next),
                ..Recipe::default()
            });
        }
    }
    Ok(page)
}
