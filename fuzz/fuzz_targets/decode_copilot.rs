//! The Copilot CLI decoder over any bytes: the input's first byte picks a file of the fixture root, the
//! rest replaces it; every session that reads the file is decoded in full and under line tests
//! and held to the conformance kit's rules (no panic, seqs that are lines, file order, a
//! selective read equal to the full read, lineage).
#![no_main]

use std::sync::OnceLock;

use history_core::testing::{Bench, Notices};
use libfuzzer_sys::fuzz_target;

fn bench() -> &'static Bench {
    static BENCH: OnceLock<Bench> = OnceLock::new();
    BENCH.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/copilot/home");
        Bench::new(&decode_copilot::HARNESS, root.as_ref(), Notices::MayDiffer)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&index, bytes)) = data.split_first() else {
        return;
    };
    bench().check(usize::from(index), Some(bytes), 0x6675_7a7a);
});
