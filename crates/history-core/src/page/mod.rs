//! A finished page, as data, and the budget it is fitted to: what [`crate::History`] answers and
//! every front end renders. A front end supplies a [`Render`] so that the core can fit the page
//! to the budget in the bytes of the very output it will print, text or JSON.

pub mod budget;
mod found;
mod items;
mod locate;
pub(crate) mod notice;

pub use found::{Explain, FindPage, FoundHit, FoundSession, RenderFind, WordScore};
pub(crate) use items::Fold;
pub use items::{
    Coverage, FoldedRun, Item, ListPage, ReadPage, Recipe, Render, RenderSessions, SessionMatch,
    SessionsPage, SCHEMA_VERSION,
};
pub(crate) use locate::fill_locations;
