//! The public corpus rows of the XML family, run through the parser: no
//! panic, every contract, the same result at every chunking. Prints how many
//! rows yield calls. Reads `../shared/corpus/public` at run time (its data is
//! test-only and never copied here); skips with a message when it is absent.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::common::check_all;
use crate::util::auto;

/// `$TOOLSTREAM_CORPUS`, else `../shared/corpus/public`; `None` (the skip
/// is reported) when absent.
fn corpus_dir() -> Option<PathBuf> {
    crate::common::shared::path_or_env("TOOLSTREAM_CORPUS", "corpus/public", "")
}

/// A row is ours when its guess is an XML dialect, or when it is `unknown`
/// and its note or text points at GLM / XML.
fn selected(guess: &str, note: &str, raw: &str) -> bool {
    match guess {
        "xml_generic" | "qwen3_coder_xml" => true,
        "unknown" => {
            let n = note.to_ascii_lowercase();
            n.contains("glm") || n.contains("xml") || raw.contains("<arg_key>")
        }
        _ => false,
    }
}

#[test]
fn corpus_rows() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    // guess → (rows, rows with calls, calls)
    let mut stats: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    // `TOOLSTREAM_CORPUS_VERBOSE=1` lists every row with its call count.
    let verbose = std::env::var_os("TOOLSTREAM_CORPUS_VERBOSE").is_some();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            // Rows without `raw_output` (the BFCL ground truth) are not outputs.
            let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let guess = row["dialect_guess"].as_str().unwrap_or("");
            let note = row["note"].as_str().unwrap_or("");
            let Some(raw) = row["raw_output"].as_str() else {
                continue;
            };
            if !selected(guess, note, raw) {
                continue;
            }
            let p = check_all(raw.as_bytes(), &auto());
            let s = stats.entry(guess.to_owned()).or_default();
            s.0 += 1;
            if !p.calls.is_empty() {
                s.1 += 1;
            }
            s.2 += p.calls.len();
            if verbose {
                eprintln!("{guess}\t{}\t{raw:?}", p.calls.len());
            }
        }
    }
    let total: usize = stats.values().map(|s| s.0).sum();
    assert!(total > 0, "the corpus holds no XML-family row");
    for (guess, (rows, with_calls, calls)) in &stats {
        eprintln!("corpus {guess}: {rows} rows, {with_calls} yield calls ({calls} calls)");
    }
}
