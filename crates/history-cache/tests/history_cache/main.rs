//! The integration tests of history-cache, as one binary.
#![forbid(unsafe_code)]

// Tidiness and safety: vanished entries swept, the size capped, no symbolic link followed.
mod hygiene;
// The cached representative: a hit decodes nothing, a change is seen, failures are not kept.
mod overview;
// One test per rule of the overview cache.
mod rules;
