//! The selector and time parsers on any text (`history_core::testing::properties::check_parsers`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        history_core::testing::properties::check_parsers(text);
    }
});
