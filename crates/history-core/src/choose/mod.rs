//! Choosing what a request is about: which sessions a selector (`claude:4f2a`, `pi:*`, a
//! transcript's path) names and how an unqualified id resolves, which sessions ran under a directory (`--cwd`), and which
//! events a filter (queries, roles, a time window) admits.

mod filter;
mod place;
mod selector;
mod words;

pub use filter::Filter;
pub use place::Place;
pub use selector::{
    is_path, resolve, resolve_path, transcript_path, PathMiss, Pattern, Selector, HOST_ONLY_HARNESS,
};
#[allow(unused_imports)]
pub use words::{
    for_each_term, for_each_term_where, is_cjk, is_joiner, is_stop_word, literal, reduce, variant,
    Literals, Word,
};
