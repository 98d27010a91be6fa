//! The OpenCode decoder over any bytes: the input's first byte picks a file of the fixture root
//! (a database, a channel database, a file of the legacy tree), the rest replaces it; every
//! session that reads the file is decoded in full and under line tests and held to the
//! conformance kit's rules (no panic, file order, a selective read equal to the full read,
//! lineage). A database's write-ahead log is fuzzed through the `opencode-wal` root.
#![no_main]

use std::sync::OnceLock;

use history_core::testing::{Bench, Notices};
use libfuzzer_sys::fuzz_target;

fn benches() -> &'static [Bench; 2] {
    static BENCHES: OnceLock<[Bench; 2]> = OnceLock::new();
    BENCHES.get_or_init(|| {
        let root = |rel: &str| format!("{}/../fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
        let bench = |rel: &str| {
            Bench::new(&decode_opencode::HARNESS, root(rel).as_ref(), Notices::Same)
        };
        [bench("opencode/data"), bench("opencode-wal/data")]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&index, bytes)) = data.split_first() else {
        return;
    };
    // The low bit picks the root, the rest the file.
    let bench = &benches()[usize::from(index & 1)];
    bench.check(usize::from(index >> 1), Some(bytes), 0x6675_7a7a);
});
