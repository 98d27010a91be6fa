//! The raw filter against decoded JSON strings: the input's first line is the query, the second
//! a JSON line; a line whose strings hold a hit must pass (`check_raw_filter`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.splitn(3, |&b| b == b'\n');
    let (Some(query), Some(line)) = (lines.next(), lines.next()) else {
        return;
    };
    if let Ok(query) = std::str::from_utf8(query) {
        history_core::testing::properties::check_raw_filter(query, line);
    }
});
