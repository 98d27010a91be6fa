//! The workspace's chores as a library, so that tests elsewhere can generate a corpus too:
//! [`corpus::generate`] writes a realistic mixed corpus with an answer key.

pub mod corpus;
