//! Every fixture session and the real sample, decoded and rendered one line per event, `*`
//! marking the active branch: a reviewer reads these to see the decoder's behaviour.

use crate::common;
use history_core::Transcript;

#[test]
fn every_fixture_session() {
    let omp = common::omp();
    let files = omp.discover();
    assert!(!files.is_empty());
    for file in files {
        let (events, decoded) = common::decode_file(&omp, &file);
        let name = common::shown(&file.path)
            .trim_end_matches(".jsonl")
            .replace('/', "__");
        insta::assert_snapshot!(name, common::render(&file, &events, &decoded));
    }
}

#[test]
fn the_august_2026_sample() {
    let omp = decode_omp::Omp::new(common::samples_root());
    let files = omp.discover();
    assert_eq!(files.len(), 1);
    let (events, decoded) = common::decode_file(&omp, &files[0]);
    insta::assert_snapshot!(
        "preloop-august-2026",
        common::render(&files[0], &events, &decoded)
    );
}
