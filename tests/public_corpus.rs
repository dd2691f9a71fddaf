//! Runs every row of the public corpus of raw model outputs
//! (`../shared/corpus/public/*.jsonl`, 1,699 rows) through the parser in auto
//! mode: whole, 1-byte and 7-byte chunks. Asserts the contracts and chunk
//! invariance on every row and prints, per dialect, how many rows yield calls.
//!
//! The corpus is reference data kept outside this repository; the test is
//! skipped with a message when it is absent.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{check_contracts, run_chunked, run_split, summary};
use toolstream::Config;

fn corpus_dir() -> Option<PathBuf> {
    common::shared::path("corpus/public")
}

#[test]
fn public_corpus_contracts_and_recovery() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl") && !p.ends_with("bfcl_ground_truth.jsonl")
        })
        .collect();
    files.sort();
    let cfg = Config::default();
    // dialect -> (rows, rows with calls, calls, truncated calls)
    let mut stats: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    let mut total = 0;
    for f in files {
        if f.file_name()
            .is_some_and(|n| n == "bfcl_ground_truth.jsonl")
        {
            continue;
        }
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(raw) = row["raw_output"].as_str() else {
                continue;
            };
            let dialect = row["dialect_guess"].as_str().unwrap_or("?").to_string();
            let input = raw.as_bytes();
            let whole = run_split(input, &[], &cfg);
            check_contracts(input, &whole);
            let want = summary(&whole);
            for n in [1, 7] {
                let ev = run_chunked(input, n, &cfg);
                check_contracts(input, &ev);
                assert_eq!(
                    summary(&ev),
                    want,
                    "row {} differs at chunk size {n}",
                    row["id"]
                );
            }
            let s = stats.entry(dialect).or_default();
            s.0 += 1;
            if !want.2.is_empty() {
                s.1 += 1;
            }
            s.2 += want.2.len();
            s.3 += want.2.iter().filter(|c| c.truncated).count();
            total += 1;
        }
    }
    assert!(
        total > 1000,
        "expected the whole public corpus, read {total} rows"
    );
    eprintln!("public corpus: {total} rows; per dialect_guess: rows, rows with calls, calls, truncated calls");
    for (d, (rows, with, calls, trunc)) in &stats {
        eprintln!("  {d:<16} {rows:>5} {with:>5} {calls:>6} {trunc:>4}");
    }
}
