//! The output budget: items are admitted from one end until the next would not fit, and a text
//! too long for the room left is cut with a marker.

use crate::paging::From;

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
    from: From,
    room: usize,
    cost: impl Fn(&T) -> usize,
    shrink: impl Fn(&mut T, usize) -> bool,
) -> Admitted {
    let n = items.len();
    let order: Vec<usize> = match from {
        From::Newest => (0..n).rev().collect(),
        From::Oldest => (0..n).collect(),
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
            From::Newest => {
                items.drain(..n - kept);
                admitted.dropped_older = true;
            }
            From::Oldest => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_from_the_newest_end() {
        let mut items = vec![100, 100, 100, 100];
        let a = admit(&mut items, From::Newest, 250, |c| *c, |_, _| false);
        assert_eq!(items, vec![100, 100]);
        assert!(a.dropped_older && !a.dropped_newer);
    }

    #[test]
    fn cuts_a_long_item_when_room_is_left() {
        let mut items = vec![10, 1000];
        let a = admit(
            &mut items,
            From::Newest,
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
    fn cut_respects_char_boundaries() {
        let mut s = "ééééééééééééééééééééééé".to_string();
        assert!(cut(&mut s, 20));
        assert!(s.len() <= 20 && s.ends_with(CUT_MARKER));
        let mut short = "ok".to_string();
        assert!(!cut(&mut short, 20));
    }
}
