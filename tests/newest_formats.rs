//! The cases of `corpus/handmade/newest_formats.jsonl` (#42): formats of
//! the newest model families, written from their templates (none is model
//! output; each row names its source). Each is parsed with its model's
//! routing (`Config::for_model`, plus the row's prefill) whole and at every
//! chunking the contract checks use, and must give exactly the row's text,
//! thinking, calls and repair kinds; rows marked `auto_same` must give the
//! same in auto mode.

mod common;

use serde_json::Value;
use toolstream::Config;

#[test]
fn newest_format_cases() {
    let text = include_str!("../corpus/handmade/newest_formats.jsonl");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).expect("row is JSON");
        let id = row["id"].as_str().unwrap();
        assert_eq!(row["written"], Value::Bool(true), "{id}: provenance");
        assert!(
            row["provenance"].as_str().is_some_and(|p| !p.is_empty()),
            "{id}"
        );
        let input = row["input"].as_str().unwrap();
        let mut cfg = Config::for_model(row["model"].as_str().unwrap());
        if let Some(p) = row["prefill"].as_str() {
            cfg = cfg.with_prefill(p);
        }
        let mut cfgs = vec![("model", cfg)];
        if row["auto_same"].as_bool().unwrap_or(false) {
            cfgs.push(("auto", Config::default()));
        }
        for (how, cfg) in cfgs {
            let p = common::check_all(input.as_bytes(), &cfg);
            assert_eq!(p.text, row["text"].as_str().unwrap(), "{id} ({how}): text");
            assert_eq!(
                p.thinking,
                row["thinking"].as_str().unwrap(),
                "{id} ({how}): thinking"
            );
            let want = row["calls"].as_array().unwrap();
            assert_eq!(p.calls.len(), want.len(), "{id} ({how}): {:?}", p.calls);
            for (c, w) in p.calls.iter().zip(want) {
                assert_eq!(c.name, w["name"].as_str().unwrap(), "{id} ({how})");
                let got: Value = serde_json::from_str(&c.arguments).unwrap();
                assert_eq!(got, w["arguments"], "{id} ({how})");
                let kinds: Vec<&str> = c.repairs.iter().map(|r| r.kind.as_str()).collect();
                let want_kinds: Vec<&str> = w["repairs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_str().unwrap())
                    .collect();
                assert_eq!(kinds, want_kinds, "{id} ({how}): repairs");
                assert!(!c.truncated, "{id} ({how})");
            }
        }
        n += 1;
    }
    assert!(n >= 10, "the corpus file lost rows: {n}");
}
