//! Every fixture, decoded and rendered one line per event (`seq.part role kind [tool] time |
//! text`), with its notices, branch and lineage: a reviewer reads these to see the behaviour.

use std::fmt::Write;

use crate::common;

#[test]
fn every_fixture() {
    for (name, _) in common::FIXTURES {
        let path = common::rule(name);
        let (events, decoded) = common::decode(&path);
        let mut out = common::render(&events);
        if let Some(branch) = &decoded.branch {
            writeln!(out, "branch: {branch:?}").unwrap();
        }
        for notice in &decoded.notices {
            writeln!(out, "notice: {notice}").unwrap();
        }
        writeln!(out, "meta: {:?}", decoded.meta).unwrap();
        for file in &decoded.lineage {
            let name = file.file_name().unwrap().to_string_lossy();
            writeln!(out, "lineage: {name}").unwrap();
        }
        insta::assert_snapshot!(*name, out);
    }
}

#[test]
fn the_0142_sample() {
    let (events, decoded) = common::decode_sample();
    let mut out = common::render(&events);
    for notice in &decoded.notices {
        writeln!(out, "notice: {notice}").unwrap();
    }
    writeln!(out, "meta: {:?}", decoded.meta).unwrap();
    insta::assert_snapshot!("real-sample-0142", out);
}
