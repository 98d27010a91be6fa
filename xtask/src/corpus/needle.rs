//! Needles: unique strings planted in the corpus, each recorded with the session, line and role
//! where a search must find it. Every needle is `needle-<seed>-<kkkkk>` plus a suffix that makes
//! one of the hard cases: stored in another case than queried, stored with JSON escapes, or with
//! characters whose case folding is not one-to-one (`ß` → `ss`, Kelvin sign → `k`).

use super::rng::Rng;

/// The three agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    Claude,
    Codex,
    Pi,
}

impl Harness {
    pub const ALL: [Harness; 3] = [Harness::Claude, Harness::Codex, Harness::Pi];

    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Pi => "pi",
        }
    }
}

/// Where in a transcript a needle goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// What a person typed.
    UserText,
    /// The model's visible reply.
    AssistantText,
    /// The model's reasoning (thinking).
    Reasoning,
    /// A tool call's input: a shell command.
    ToolInput,
    /// A tool's output.
    ToolOutput,
    /// Injected context: system reminders, developer messages, AGENTS.md, summaries.
    Context,
}

impl Slot {
    pub const ALL: [Slot; 6] = [
        Slot::UserText,
        Slot::AssistantText,
        Slot::Reasoning,
        Slot::ToolInput,
        Slot::ToolOutput,
        Slot::Context,
    ];

    /// The role of the event this slot becomes (user, assistant, tool, context).
    pub fn role(self) -> &'static str {
        match self {
            Slot::UserText => "user",
            Slot::AssistantText | Slot::Reasoning => "assistant",
            Slot::ToolInput | Slot::ToolOutput => "tool",
            Slot::Context => "context",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Slot::UserText => "user_text",
            Slot::AssistantText => "assistant_text",
            Slot::Reasoning => "reasoning",
            Slot::ToolInput => "tool_input",
            Slot::ToolOutput => "tool_output",
            Slot::Context => "context",
        }
    }
}

/// How a needle is stored versus how it is queried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Stored and queried alike.
    Plain,
    /// Stored upper case, queried lower case.
    StoredUpper,
    /// Stored lower case, queried upper case.
    QueriedUpper,
    /// `é` stored as the escape `\u00e9`.
    EscapedUnicode,
    /// A newline inside the needle, stored as `\n`.
    EscapedNewline,
    /// Quotes inside the needle, stored as `\"`.
    EscapedQuote,
    /// A slash stored as the optional escape `\/`.
    EscapedSlash,
    /// `ß` stored raw, queried as `SS`.
    SharpS,
    /// The Kelvin sign (U+212A) stored raw, queried with `k`.
    Kelvin,
    /// The Kelvin sign stored as the escape `\u212a`, queried with `K`.
    EscapedKelvin,
}

impl Form {
    /// Every form but `Plain`.
    pub const VARIANTS: [Form; 9] = [
        Form::StoredUpper,
        Form::QueriedUpper,
        Form::EscapedUnicode,
        Form::EscapedNewline,
        Form::EscapedQuote,
        Form::EscapedSlash,
        Form::SharpS,
        Form::Kelvin,
        Form::EscapedKelvin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Form::Plain => "plain",
            Form::StoredUpper => "stored_upper",
            Form::QueriedUpper => "queried_upper",
            Form::EscapedUnicode => "escaped_unicode",
            Form::EscapedNewline => "escaped_newline",
            Form::EscapedQuote => "escaped_quote",
            Form::EscapedSlash => "escaped_slash",
            Form::SharpS => "sharp_s",
            Form::Kelvin => "kelvin",
            Form::EscapedKelvin => "escaped_kelvin",
        }
    }

    /// (query, text as written inside a JSON string) for the needle `stem`.
    fn strings(self, stem: &str) -> (String, String) {
        let up = stem.to_uppercase();
        match self {
            Form::Plain => (stem.to_string(), stem.to_string()),
            Form::StoredUpper => (format!("{stem}-upper"), format!("{up}-UPPER")),
            Form::QueriedUpper => (format!("{up}-LOWER"), format!("{stem}-lower")),
            Form::EscapedUnicode => (format!("{stem}-café"), format!("{stem}-caf\\u00e9")),
            Form::EscapedNewline => (
                format!("{stem}-line\nbreak"),
                format!("{stem}-line\\nbreak"),
            ),
            Form::EscapedQuote => (
                format!("{stem}-\"quoted\""),
                format!("{stem}-\\\"quoted\\\""),
            ),
            Form::EscapedSlash => (format!("{stem}-dir/file"), format!("{stem}-dir\\/file")),
            Form::SharpS => (format!("{up}-STRASSE"), format!("{stem}-straße")),
            Form::Kelvin => (format!("{stem}-kelvin"), format!("{stem}-\u{212A}elvin")),
            Form::EscapedKelvin => (format!("{up}-KELVIN"), format!("{stem}-\\u212aelvin")),
        }
    }
}

/// One needle to plant.
#[derive(Clone, Debug)]
pub struct Needle {
    /// What a search is given.
    pub query: String,
    /// The needle as it is written inside a JSON string.
    pub raw: String,
    pub slot: Slot,
    pub form: Form,
    /// Where in its session it goes, as a fraction of the session's size.
    pub at: f64,
    /// Planted on a branch the session abandons (a rewind): a search must NOT find it.
    pub abandoned: bool,
}

/// Hands out needle numbers and builds needles.
pub struct Factory {
    seed: u64,
    next: u32,
}

impl Factory {
    pub fn new(seed: u64) -> Factory {
        Factory { seed, next: 1 }
    }

    pub fn make(&mut self, rng: &mut Rng, slot: Slot, form: Form) -> Needle {
        let stem = format!("needle-{}-{:05}", self.seed, self.next);
        self.next += 1;
        let (query, raw) = form.strings(&stem);
        Needle {
            query,
            raw,
            slot,
            form,
            at: rng.unit() * 0.9,
            abandoned: false,
        }
    }

    /// A query that is never written anywhere.
    pub fn absent(&self, i: usize) -> String {
        format!("needle-{}-absent-{i}", self.seed)
    }

    /// Every slot with the plain form and two variants, rotating so that each harness gets
    /// every variant at least once.
    pub fn matrix(&mut self, rng: &mut Rng, rotate: usize) -> Vec<Needle> {
        let mut out = Vec::new();
        for (i, slot) in Slot::ALL.into_iter().enumerate() {
            out.push(self.make(rng, slot, Form::Plain));
            for j in 0..2 {
                let form = Form::VARIANTS[(2 * i + j + rotate) % Form::VARIANTS.len()];
                out.push(self.make(rng, slot, form));
            }
        }
        out
    }

    /// A needle of a random slot and form.
    pub fn random(&mut self, rng: &mut Rng) -> Needle {
        let slot = rng.pick(&Slot::ALL);
        let form = if rng.chance(0.5) {
            Form::Plain
        } else {
            rng.pick(&Form::VARIANTS)
        };
        self.make(rng, slot, form)
    }
}

/// A planted needle: where it ended up.
#[derive(Clone, Debug)]
pub struct Hit {
    pub needle: Needle,
    /// The 1-based line number.
    pub seq: u64,
    /// Codex writes user, assistant and reasoning texts twice (an `event_msg` and a
    /// `response_item`); this is the line of the second copy.
    pub mirror_seq: Option<u64>,
    /// The needle's bytes as they occur in the line (escaped once more inside a JSON-encoded
    /// string such as Codex's `arguments`).
    pub raw_in_file: String,
}

/// The needles of one session, waiting for a line of the right kind.
pub struct Planter {
    pending: Vec<(u64, Needle)>,
    pub hits: Vec<Hit>,
    pub trapped: Vec<Hit>,
    /// Whether lines being written are on the branch the session keeps.
    pub live: bool,
}

impl Planter {
    pub fn new(needles: Vec<Needle>, target: u64) -> Planter {
        let pending = needles
            .into_iter()
            .map(|n| ((n.at * target as f64) as u64, n))
            .collect();
        Planter {
            pending,
            hits: Vec::new(),
            trapped: Vec::new(),
            live: true,
        }
    }

    fn ready(&self, slot: Slot, bytes: u64) -> Option<usize> {
        self.pending
            .iter()
            .position(|(at, n)| n.slot == slot && n.abandoned != self.live && *at <= bytes)
    }

    /// Whether a needle is due for a line of this kind (so an optional line should be written).
    pub fn wants(&self, slot: Slot, bytes: u64) -> bool {
        self.ready(slot, bytes).is_some()
    }

    /// The needle due for a line of this kind, if any.
    pub fn take(&mut self, slot: Slot, bytes: u64) -> Option<Needle> {
        self.ready(slot, bytes).map(|i| self.pending.remove(i).1)
    }

    /// Whether a needle is due that must go on an abandoned branch.
    pub fn wants_abandoned(&self, bytes: u64) -> bool {
        self.pending
            .iter()
            .any(|(at, n)| n.abandoned && *at <= bytes)
    }

    pub fn record(
        &mut self,
        needle: Needle,
        seq: u64,
        mirror_seq: Option<u64>,
        raw_in_file: String,
    ) {
        let hit = Hit {
            needle,
            seq,
            mirror_seq,
            raw_in_file,
        };
        if hit.needle.abandoned {
            self.trapped.push(hit);
        } else {
            self.hits.push(hit);
        }
    }

    /// Whether every needle has been planted.
    pub fn done(&self) -> bool {
        self.pending.is_empty()
    }
}
