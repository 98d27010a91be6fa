//! Every fixture session (the real sample included), decoded and rendered one line per event,
//! `*` marking the active branch: a reviewer reads these to see the decoder's behaviour.

use crate::common;
use history_core::Transcript;

#[test]
fn every_fixture_session() {
    let pi = common::pi();
    let files = pi.discover();
    assert!(!files.is_empty());
    for file in files {
        let (events, decoded) = common::decode_file(&pi, &file);
        let name = file
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.split_once('_'))
            .map(|(_, id)| id.to_string())
            .unwrap_or_else(|| file.key.id.clone());
        insta::assert_snapshot!(name, common::render(&file, &events, &decoded));
    }
}

#[test]
fn the_april_2026_sample() {
    let pi = decode_pi::Pi::new(common::samples_root());
    let files = pi.discover();
    assert_eq!(files.len(), 1);
    let (events, decoded) = common::decode_file(&pi, &files[0]);
    insta::assert_snapshot!(
        "raquezha-pi.dev-april-2026",
        common::render(&files[0], &events, &decoded)
    );
}
