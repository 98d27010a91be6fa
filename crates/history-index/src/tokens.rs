//! Retrieval tokens.
