//! The JSON scan against serde_json on any text (`history_core::testing::properties::check_scan`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        history_core::testing::properties::check_scan(text);
    }
});
