//! Every fixture session and the real samples, decoded and rendered one line per event: a
//! reviewer reads these to see the decoder's behaviour.

use decode_gemini::Gemini;
use history_core::Transcript;

use crate::common;

#[test]
fn every_fixture_session() {
    for root in [common::home(), common::samples()] {
        let gemini = Gemini::new(root);
        let files = gemini.discover();
        assert!(!files.is_empty());
        for file in files {
            let (events, decoded) = common::decode_file(&gemini, &file);
            insta::assert_snapshot!(file.key.id.clone(), common::render(&events, &decoded));
        }
    }
}
