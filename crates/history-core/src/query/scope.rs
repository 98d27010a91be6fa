//! What a page is built from besides its request: the sources, what a search projection and the
//! overview's cache know, and how much of where items come from to fill in.

use crate::corpus::Corpus;
use crate::model::SessionFile;
use crate::page::{fill_locations, Item};
use crate::query::{Projection, RepresentativeCache};

/// The sources and helpers a query reads through ([`crate::History`] holds them).
pub(crate) struct Scope<'a> {
    /// The sources.
    pub corpus: &'a Corpus,
    /// A search projection that searches consult before reading files.
    pub projection: Option<&'a dyn Projection>,
    /// A cache of the unfiltered overview's representatives.
    pub cache: Option<&'a dyn RepresentativeCache>,
    /// Whether items say where their lines are.
    pub locations: bool,
    /// Whether items say how to reopen their sessions.
    pub resumes: bool,
}

impl Scope<'_> {
    /// Fills in the items' locations and resume commands, as far as asked for; `files[i]` is the
    /// session file of `items[i]`.
    pub(crate) fn fill(&self, items: &mut [Item], files: &[&SessionFile]) {
        if self.locations || self.resumes {
            fill_locations(self.corpus, items, files, self.locations);
        }
    }
}
