//! The output budget: the whole rendered output fits in it. Items are admitted from one end until
//! the next would not fit, and a text too long for the room left is cut with a marker, keeping a
//! search's match in view.

use crate::model::End;
use crate::page::{
    FindPage, FoundHit, FoundSession, Item, ListPage, ReadPage, Recipe, Render, RenderFind,
    RenderSessions, SessionMatch, SessionsPage,
};

/// The default budget, in bytes of output.
pub const DEFAULT_BUDGET: usize = 32 * 1024;

/// The marker appended to a cut text.
pub const CUT_MARKER: &str = "… [truncated]";

/// Below this much room, a long item is left out rather than cut to a stub.
const MIN_CUT_ROOM: usize = 160;

/// What admission left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Admitted {
    /// Items were left out at the older end.
    pub dropped_older: bool,
    /// Items were left out at the newer end.
    pub dropped_newer: bool,
}

/// Admits `items` (oldest first) from the end `from` names while their cost fits in `room`.
/// When the next item does not fit, `shrink(item, room_left)` may cut it to fit (returning
/// whether it now does); admission stops there.
pub fn admit<T>(
    items: &mut Vec<T>,
    from: End,
    room: usize,
    cost: impl Fn(&T) -> usize,
    shrink: impl Fn(&mut T, usize) -> bool,
) -> Admitted {
    let n = items.len();
    let order: Vec<usize> = match from {
        End::Newest => (0..n).rev().collect(),
        End::Oldest => (0..n).collect(),
    };
    let mut used = 0;
    let mut kept = 0;
    for &i in &order {
        let c = cost(&items[i]);
        if used + c <= room {
            used += c;
            kept += 1;
            continue;
        }
        let left = room.saturating_sub(used);
        if left >= MIN_CUT_ROOM && shrink(&mut items[i], left) {
            kept += 1;
        }
        break;
    }
    let mut admitted = Admitted::default();
    if kept < n {
        match from {
            End::Newest => {
                items.drain(..n - kept);
                admitted.dropped_older = true;
            }
            End::Oldest => {
                items.truncate(kept);
                admitted.dropped_newer = true;
            }
        }
    }
    admitted
}

/// Cuts `text` to at most `max_bytes` bytes (marker included) on a character boundary.
/// Returns `false` when it already fits.
pub fn cut(text: &mut String, max_bytes: usize) -> bool {
    if text.len() <= max_bytes {
        return false;
    }
    let mut end = max_bytes.saturating_sub(CUT_MARKER.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(CUT_MARKER);
    true
}

/// The smallest budget accepted: below it not even a page's frame fits.
pub const MIN_BUDGET: usize = 1024;

/// Room kept for recipe numbers that are filled in after admission.
pub(crate) const FRAME_SLACK: usize = 96;

/// The least room a hit's share of the budget gets.
const MIN_SHARE: usize = 600;

/// How much text before a match stays in view when a long hit is cut.
const LEAD: usize = 160;

/// What stands for the text cut before the match.
const ELLIPSIS: &str = "…";

/// Admits the page's items from the end `from` names until the output would exceed `budget`,
/// cutting one long text to fit where that is worth it. With `fair_share` (results from many
/// sessions), a text longer than its share of the room is cut first, so that one long event
/// does not crowd out every other hit. `slack` bytes are kept for what admission fills in.
fn fit_list_framed(
    page: &mut ListPage,
    render: &dyn Render,
    budget: usize,
    from: End,
    fair_share: bool,
    slack: usize,
) -> Admitted {
    let mut items = std::mem::take(&mut page.items);
    let frame = render.list(page).len() + slack;
    let implicit = page.implicit;
    let cost = |i: &Item| render.item(i, implicit).len();
    let room = budget.saturating_sub(frame);
    if fair_share && !items.is_empty() {
        let share = (room / items.len()).max(MIN_SHARE);
        for item in &mut items {
            if cost(item) > share {
                shrink(item, share, cost);
            }
        }
    }
    let admitted = admit(&mut items, from, room, cost, |i, room| {
        shrink(i, room, cost)
    });
    page.items = items;
    admitted
}

/// Fits a list page to `budget` as measured at its widest. With `widest` recipes (older,
/// newer), its frame holds the footer a cut page gets and those recipes as wide as they can come
/// out, whether or not it ends up cut or with them, so that which items fit never depends on
/// where the page ends; `slack` is kept for what admission fills in. Afterwards the page says
/// what admission left out, and has no recipes: the caller writes them from what is on it.
pub(crate) fn fit_list_widest(
    page: &mut ListPage,
    render: &dyn Render,
    budget: usize,
    from: End,
    fair_share: bool,
    slack: usize,
    widest: Option<(Option<Recipe>, Option<Recipe>)>,
) -> Admitted {
    if let Some((older, newer)) = widest {
        page.older = older;
        page.newer = newer;
        page.budget_cut = true;
    }
    let admitted = fit_list_framed(page, render, budget, from, fair_share, slack);
    page.older = None;
    page.newer = None;
    page.has_older |= admitted.dropped_older;
    page.has_newer |= admitted.dropped_newer;
    page.budget_cut = admitted.dropped_older || admitted.dropped_newer;
    admitted
}

/// Fits a session-level search's `entries` to `budget` from `from`'s end, its frame measured
/// with the footer a cut page gets, whether it is cut or not.
pub(crate) fn fit_sessions(
    page: &mut SessionsPage,
    mut entries: Vec<SessionMatch>,
    render: &dyn RenderSessions,
    budget: usize,
    from: End,
) {
    page.budget_cut = true;
    let frame = render.sessions(page).len() + FRAME_SLACK;
    let room = budget.saturating_sub(frame);
    let admitted = admit(
        &mut entries,
        from,
        room,
        |s| render.session(s).len(),
        |_, _| false,
    );
    page.sessions = entries;
    page.has_older |= admitted.dropped_older;
    page.has_newer |= admitted.dropped_newer;
    page.budget_cut = admitted.dropped_older || admitted.dropped_newer;
}

/// Fits a ranked search's entries (sessions, or events) into `budget`, best first, as `render`
/// renders them; how many it kept. The page's `more` recipe is added after, within the slack
/// every page keeps.
pub(crate) fn fit_find(
    page: &mut FindPage,
    sessions: Option<Vec<FoundSession>>,
    events: Option<Vec<FoundHit>>,
    render: &dyn RenderFind,
    budget: usize,
) -> usize {
    page.sessions = sessions.as_ref().map(|_| Vec::new());
    page.events = events.as_ref().map(|_| Vec::new());
    let room = budget.saturating_sub(render.find(page).len() + FRAME_SLACK);
    // Best first: whatever does not fit is left off the end.
    fn best_first<T>(
        items: Option<Vec<T>>,
        room: usize,
        cost: impl Fn(&T) -> usize,
    ) -> (Option<Vec<T>>, bool) {
        match items {
            None => (None, false),
            Some(mut items) => {
                let cut = admit(&mut items, End::Oldest, room, cost, |_, _| false).dropped_newer;
                (Some(items), cut)
            }
        }
    }
    let (sessions, sessions_cut) = best_first(sessions, room, |e| render.found_session(e).len());
    let (events, events_cut) = best_first(events, room, |h| render.found_event(h).len());
    (page.sessions, page.events) = (sessions, events);
    page.budget_cut = sessions_cut || events_cut;
    page.has_more |= page.budget_cut;
    page.sessions.as_ref().map_or(0, Vec::len) + page.events.as_ref().map_or(0, Vec::len)
}

/// What a front end keeps besides its envelope when it sends a page's text twice (the MCP
/// server sends it as text and as structured content): room for what the core writes after
/// admission (the recipes, the line that says more results exist), which a page's budget keeps
/// once.
pub const SECOND_COPY: usize = 640;

/// The budget of a page that a front end sends inside an envelope of `envelope` bytes, its text
/// twice, when the whole answer may take `total` bytes.
pub fn within_envelope(total: usize, envelope: usize) -> usize {
    total.saturating_sub(envelope + SECOND_COPY)
}

/// Cuts an item's text until its rendering fits in `room`; false if even an empty text won't.
/// A search hit keeps its match in view: the text then starts a little before it.
fn shrink(item: &mut Item, room: usize, cost: impl Fn(&Item) -> usize) -> bool {
    let original = std::mem::take(&mut item.event.text);
    let focus = item.focus;
    let full = match focus.filter(|f| *f > LEAD && *f <= original.len()) {
        Some(at) => {
            let mut start = at - LEAD;
            while !original.is_char_boundary(start) {
                start += 1;
            }
            // The match moves with the cut, so that cutting the text again keeps it in view
            // (and starts it where it starts now).
            item.focus = Some(ELLIPSIS.len() + at - start);
            format!("{ELLIPSIS}{}", &original[start..])
        }
        None => original.clone(),
    };
    item.truncated = true;
    let base = cost(item);
    let overhead = base + CUT_MARKER.len();
    if overhead >= room {
        item.event.text = original;
        item.truncated = false;
        item.focus = focus;
        return false;
    }
    let mut allowed = room - overhead;
    loop {
        let mut text = full.clone();
        cut(&mut text, allowed + CUT_MARKER.len());
        item.event.text = text;
        let c = cost(item);
        if c <= room || allowed == 0 {
            return c <= room;
        }
        allowed = smaller(allowed, c - base, room - base);
    }
}

/// The next text allowance after `allowed` bytes of text cost `spent` bytes of output where only
/// `fits` were left: scaled by that ratio, since a renderer may spend several bytes on one byte
/// of text (escapes, or the text shown twice), and smaller by one at least.
fn smaller(allowed: usize, spent: usize, fits: usize) -> usize {
    let scaled = (allowed as u128 * fits as u128 / spent.max(1) as u128) as usize;
    scaled.min(allowed.saturating_sub(1))
}

/// Cuts the read item's text so the output fits in `budget`; returns how many characters of it
/// are shown, or `None` when it fits whole.
pub fn fit_read(page: &mut ReadPage, render: &dyn Render, budget: usize) -> Option<usize> {
    let full_len = page.item.as_ref()?.event.text.chars().count();
    if render.read(page).len() + FRAME_SLACK <= budget {
        return None;
    }
    let item = page.item.as_mut()?;
    let full = std::mem::take(&mut item.event.text);
    item.truncated = true;
    page.next = Some(Recipe::default());
    let overhead = render.read(page).len() + FRAME_SLACK;
    let mut allowed = budget.saturating_sub(overhead);
    loop {
        let shown = prefix(&full, allowed);
        let chars = shown.chars().count();
        if let Some(item) = page.item.as_mut() {
            item.event.text = shown.to_string();
        }
        let total = render.read(page).len() + FRAME_SLACK;
        if total <= budget || allowed == 0 {
            return Some(chars.min(full_len));
        }
        allowed = smaller(
            allowed,
            total.saturating_sub(overhead),
            budget.saturating_sub(overhead),
        );
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_from_the_newest_end() {
        let mut items = vec![100, 100, 100, 100];
        let a = admit(&mut items, End::Newest, 250, |c| *c, |_, _| false);
        assert_eq!(items, vec![100, 100]);
        assert!(a.dropped_older && !a.dropped_newer);
    }

    #[test]
    fn cuts_a_long_item_when_room_is_left() {
        let mut items = vec![10, 1000];
        let a = admit(
            &mut items,
            End::Newest,
            500,
            |c| *c,
            |c, room| {
                *c = room;
                true
            },
        );
        assert_eq!(items, vec![500]);
        assert!(a.dropped_older);
    }

    #[test]
    fn a_hit_cut_twice_keeps_its_match_in_view() {
        let text = format!("{}needle{}", "é".repeat(400), "x".repeat(4000));
        let mut item = Item::new(
            "s".into(),
            None,
            crate::Event {
                seq: 1,
                part: 0,
                role: crate::Role::Tool,
                kind: "tool_output".into(),
                timestamp: None,
                text: text.clone(),
                visible: false,
                tool: None,
                on_active_branch: None,
            },
        );
        item.focus = text.find("needle");
        let cost = |i: &Item| i.event.text.len() + 50;
        for room in [1500, 900, 600, 400] {
            assert!(shrink(&mut item, room, cost), "{room}");
            assert!(cost(&item) <= room);
            assert!(item.event.text.starts_with(ELLIPSIS));
            assert!(
                item.event.text.contains("needle"),
                "{room}: {}",
                item.event.text
            );
        }
    }

    #[test]
    fn cut_respects_char_boundaries() {
        let mut s = "ééééééééééééééééééééééé".to_string();
        assert!(cut(&mut s, 20));
        assert!(s.len() <= 20 && s.ends_with(CUT_MARKER));
        let mut short = "ok".to_string();
        assert!(!cut(&mut short, 20));
    }
}
