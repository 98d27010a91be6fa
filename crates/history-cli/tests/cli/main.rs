//! The notesoup-history command end to end: the built binary (and, in process, `history_cli`'s
//! own entry points) over a private copy of the fixtures. One test binary for the crate, one
//! module a concern, so that the workspace is linked once rather than once a file.

// A private copy of the fixtures with fixed modification times, and running the binary on it.
mod common;

// Claude Code through the CLI: pages, selectors, budgets, errors, what it shows of each rule.
mod claude;
// Claude Code 2.1.78–2.1.207 through the CLI, its sessions mixed with the older ones.
mod claude_2026;
// Codex through the CLI: generations, `.zst`, inherited history, rollbacks, context, damage.
mod codex;
// GitHub Copilot CLI through the CLI: a test per rule of its format, the real samples.
mod copilot;
// The same requests through history-core's API and through the binary: identical output.
mod core_api;
// Time bounds name real calendar days.
mod dates;
// Gemini CLI through the CLI: replayed recordings, stubs, legacy files, sub-agents, the index.
mod gemini;
// `completions` and `man`, for every harness of the registry.
mod documents;
// `export`: a whole session as a document, snapshotted whole or by its outline.
mod export;
// `find`: ranked search in plain words, the same with the index as without it.
mod find;
// The search index as a user has it: equal to a scan however transcripts and database change.
mod index;
// The index under faults: damaged, truncated or rebuilt under a search, it never answers wrong.
mod index_damage;
// A transcript over the size limit is refused from its size, the same way by every command.
mod limits;
// A search the index answers decodes only the lines its page needs, located by the index.
mod located;
// Every `--json` item names its line (`path`, `line`, bytes) and how to resume its session.
mod locations;
// The MCP server in process: the protocol, the tools' schemas, the CLI's very pages.
mod mcp;
// The MCP server end to end with the official Python client (`mcp_client.py` beside it).
mod mcp_client;
// All three harnesses in one overview, one search, and one selector space.
mod mixed;
// OpenCode through the CLI: a session per rule, the log's newest turn, nothing written.
mod opencode;
// The newest real samples: overview, browse and search, every event in its role, once.
mod newest;
// The fuzz targets' invariants on the stable toolchain: mutated fixtures, every decoder.
mod mutations;
// Oh My Pi through the CLI: its title slot, its own entries, sub-agents, forks, the real sample.
mod omp;
// Paging a search of many sessions by its recipes: every hit once, in order, from either end.
mod paging;
// `pick` under a pseudo-terminal: type, move, Enter prints the resume command; Esc nothing.
mod pick;
// pi through the CLI: the active branch, `--all-branches`, versions, forks, damage, roots.
mod pi;
// Real transcripts the agents wrote (`cargo xtask record`): every marker in its session, with
// its role, once, on its branch.
mod recorded;
// The raw prefilter never loses a hit: results with it equal results with full decoding.
mod prefilter;
// The index when things go wrong: access times, the update lock, errors naming their cause,
// a full disk, Ctrl-C.
mod index_faults;
// A fourth, test-only harness added to the registry alone works through every command.
mod registry;
// `cwd`, `git_branch` and `title` on every `--json` item of every harness.
mod session_meta;
// `--session` takes a transcript's path, and recipes go on naming its session by its key.
mod session_path;
// Output for a person: color, highlights, local times, a line a session, `--sessions`.
mod terminal;
// Lines torn by a writer while reads, searches and the overview run: never a half line shown.
mod torn_lines;
// What a person at a shell meets first: usage errors, stdout and stderr, `list --help`.
mod usage;
