//! What the projection keeps of a line's events: everything but their texts. A query reads the
//! line and decodes it alone ([`history_core::Transcript::replay`]) for the texts, and knows
//! each stored event's text among those the replay gives by a hash of it.

use history_core::{Event, Role, Timestamp};

use crate::varint;

/// One stored event: an [`Event`] without its text, seq and branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// Its part of the line.
    pub part: u32,
    /// Its role.
    pub role: Role,
    /// Its kind.
    pub kind: String,
    /// When it happened.
    pub timestamp: Option<Timestamp>,
    /// Whether a person would see it in the dialogue.
    pub visible: bool,
    /// The tool it belongs to.
    pub tool: Option<String>,
    /// [`text_hash`] of its text.
    pub text: u64,
}

impl Stored {
    /// The event at line `seq` with this text.
    pub fn event(&self, seq: u64, text: String) -> Event {
        Event {
            seq,
            part: self.part,
            role: self.role,
            kind: self.kind.clone(),
            timestamp: self.timestamp,
            text,
            visible: self.visible,
            tool: self.tool.clone(),
            on_active_branch: None,
        }
    }
}

/// The hash by which a replayed text is known: XXH3, whose values are fixed by its
/// specification (they are stored, and must not change between builds), and which hashes a
/// long tool output at memory speed where FNV-1a took a byte a step (a tenth of a
/// `--sessions` search that reads thousands of lines).
pub fn text_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

const VISIBLE: u8 = 1 << 2;
const TOOL: u8 = 1 << 3;
const TIMED: u8 = 1 << 4;

/// Appends one event to a line's encoding.
pub fn encode(event: &Event, out: &mut Vec<u8>) {
    varint::put(out, u64::from(event.part));
    let role = Role::ALL.iter().position(|r| *r == event.role).unwrap_or(0) as u8;
    let flags = role
        | if event.visible { VISIBLE } else { 0 }
        | if event.tool.is_some() { TOOL } else { 0 }
        | if event.timestamp.is_some() { TIMED } else { 0 };
    out.push(flags);
    bytes(event.kind.as_bytes(), out);
    if let Some(tool) = &event.tool {
        bytes(tool.as_bytes(), out);
    }
    if let Some(t) = event.timestamp {
        out.extend_from_slice(&t.0.to_le_bytes());
    }
    out.extend_from_slice(&text_hash(&event.text).to_le_bytes());
}

/// A line's events, in the order they were encoded; `None` for bytes no build wrote.
pub fn decode(mut input: &[u8]) -> Option<Vec<Stored>> {
    let mut events = Vec::new();
    while !input.is_empty() {
        let part = u32::try_from(read_varint(&mut input)?).ok()?;
        let (&flags, rest) = input.split_first()?;
        input = rest;
        let role = *Role::ALL.get(usize::from(flags & 3))?;
        let kind = read_string(&mut input)?;
        let tool = match flags & TOOL {
            0 => None,
            _ => Some(read_string(&mut input)?),
        };
        let timestamp = match flags & TIMED {
            0 => None,
            _ => Some(Timestamp(i64::from_le_bytes(take(&mut input)?))),
        };
        let text = u64::from_le_bytes(take(&mut input)?);
        events.push(Stored {
            part,
            role,
            kind,
            timestamp,
            visible: flags & VISIBLE != 0,
            tool,
            text,
        });
    }
    Some(events)
}

fn bytes(b: &[u8], out: &mut Vec<u8>) {
    varint::put(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn read_varint(input: &mut &[u8]) -> Option<u64> {
    let mut at = 0;
    let n = varint::read(input, &mut at);
    *input = &input[at..];
    n
}

fn read_string(input: &mut &[u8]) -> Option<String> {
    let len = usize::try_from(read_varint(input)?).ok()?;
    let (s, rest) = (input.get(..len)?, input.get(len..)?);
    *input = rest;
    String::from_utf8(s.to_vec()).ok()
}

fn take(input: &mut &[u8]) -> Option<[u8; 8]> {
    let (b, rest) = input.split_first_chunk::<8>()?;
    *input = rest;
    Some(*b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(part: u32, role: Role, tool: Option<&str>, time: Option<i64>) -> Event {
        Event {
            seq: 7,
            part,
            role,
            kind: "tool_output".into(),
            timestamp: time.map(Timestamp),
            text: format!("text {part}"),
            visible: role == Role::User,
            tool: tool.map(str::to_owned),
            on_active_branch: None,
        }
    }

    #[test]
    fn events_come_back_as_encoded_but_their_texts() {
        let events = [
            event(0, Role::User, None, Some(-5)),
            event(1, Role::Tool, Some("Bash"), None),
            event(300, Role::Context, Some(""), Some(i64::MAX)),
        ];
        let mut bytes = Vec::new();
        for e in &events {
            encode(e, &mut bytes);
        }
        let stored = decode(&bytes).unwrap();
        for (s, e) in stored.iter().zip(&events) {
            assert_eq!(s.text, text_hash(&e.text));
            assert_eq!(s.event(7, e.text.clone()), *e);
        }
        assert_eq!(stored.len(), 3);
        // Cut anywhere, the bytes are refused rather than misread.
        for cut in 1..bytes.len() {
            if let Some(short) = decode(&bytes[..cut]) {
                assert!(short.len() < 3, "cut at {cut}");
            }
        }
    }
}
