//! The workspace's chores as a library, so that tests elsewhere can generate a corpus too:
//! [`corpus::generate`] writes a realistic mixed corpus with an answer key, and [`layers`]
//! checks that the modules of every crate import each other without a circle, and [`bench_raw`]
//! measures history-raw's hand-written searches against the crates that would replace them.

#![forbid(unsafe_code)]

pub mod bench_raw;
pub mod corpus;
pub mod layers;
