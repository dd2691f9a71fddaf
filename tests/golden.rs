//! Golden tests over the project's own corpus of real model output
//! (`corpus/real/*.jsonl`, labelled in `corpus/expected.jsonl`).
//!
//! For every entry, the whole text, the model's real streamed chunks (as
//! `llama-cpp-python` produced them) and 1-byte chunks must give the same
//! text, thinking and calls, and every contract must hold. The calls are
//! then compared with the hand-written label:
//!
//! * an entry not listed in `corpus/known_differences.jsonl` must give
//!   exactly the labelled calls (names and arguments as JSON values);
//! * an entry listed there (with the kind and the reason it differs) must
//!   still give exactly the calls recorded there, so every change of
//!   behaviour on the corpus — better or worse — fails the test until the
//!   file is updated on purpose. `TOOLSTREAM_GOLDEN_WRITE=1` rewrites the
//!   recorded calls and kinds (keeping reasons already written), for review
//!   in `git diff`.
//!
//! The test prints the score: entries whose calls match their label.
//!
//! A second test parses every entry with the tool list its prompt offered
//! (as a server that knows the request's tools does; the peer comparison
//! runs toolstream this way too). The tools may name or type a call that the
//! default configuration cannot; every entry where they change the calls is
//! recorded in `corpus/tool_effects.jsonl` with the calls each way and why,
//! so such a change fails the test until it is reviewed there
//! (`TOOLSTREAM_GOLDEN_WRITE=1` rewrites that file too).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolstream::{Config, Event, Tools};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

/// The lines of a JSON-lines file of records, by their `id`.
fn by_id(path: &Path) -> BTreeMap<String, Value> {
    read_jsonl(path)
        .into_iter()
        .map(|v| {
            let id = v["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: a line without an id", path.display()));
            (id.to_owned(), v)
        })
        .collect()
}

/// The calls of an event list as `[{"name", "arguments"}]` JSON values.
fn call_values(events: &[Event]) -> Vec<Value> {
    common::calls(events)
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "arguments": c.arguments_value().expect("arguments are valid JSON"),
            })
        })
        .collect()
}

/// The kind of a difference between what the parser gives and the label.
fn kind(got: &[Value], want: &[Value]) -> &'static str {
    let names = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    if got.len() > want.len() {
        "extra_call"
    } else if got.len() < want.len() {
        "missing_call"
    } else if names(got) != names(want) {
        "other_name"
    } else {
        "other_arguments"
    }
}

/// The entries of `corpus/real/*.jsonl`, in file order.
fn entries() -> Vec<Value> {
    let mut entries = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(corpus().join("real"))
        .expect("corpus/real")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in &files {
        entries.extend(read_jsonl(f));
    }
    assert!(entries.len() >= 300, "corpus has {} entries", entries.len());
    entries
}

/// Parses entry `e` whole, in its real recorded chunks and in 1-byte
/// chunks; checks every contract and that the three agree; returns the
/// calls of the whole parse.
fn calls_at_every_chunking(e: &Value, cfg: &Config) -> Vec<Value> {
    let id = e["id"].as_str().expect("entry id");
    let text = e["text"].as_str().expect("entry text").as_bytes();
    let chunks: Vec<&str> = e["chunks"]
        .as_array()
        .expect("entry chunks")
        .iter()
        .map(|c| c.as_str().expect("chunk"))
        .collect();
    assert_eq!(
        chunks.concat().as_bytes(),
        text,
        "{id}: chunks join to text"
    );
    let whole = common::run_split(text, &[], cfg);
    common::check_contracts(text, &whole);
    let mut splits = Vec::new();
    let mut at = 0;
    for c in &chunks {
        at += c.len();
        splits.push(at);
    }
    let real = common::run_split(text, &splits, cfg);
    common::check_contracts(text, &real);
    let bytes = common::run_chunked(text, 1, cfg);
    common::check_contracts(text, &bytes);
    assert_eq!(
        common::summary(&whole),
        common::summary(&real),
        "{id}: real chunks differ from whole"
    );
    assert_eq!(
        common::summary(&whole),
        common::summary(&bytes),
        "{id}: 1-byte chunks differ from whole"
    );
    call_values(&whole)
}

/// With `TOOLSTREAM_GOLDEN_WRITE` set, rewrites the record file at `path`
/// with `records` (one JSON line each) for review in `git diff`; otherwise
/// fails on any of `failures`.
fn write_or_check(path: &Path, records: &[Value], failures: &[String]) {
    if std::env::var_os("TOOLSTREAM_GOLDEN_WRITE").is_some() {
        let mut out = String::new();
        for r in records {
            out.push_str(&serde_json::to_string(r).expect("json"));
            out.push('\n');
        }
        std::fs::write(path, out)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("rewrote {}", path.display());
        return;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn real_corpus_matches_labels_at_every_chunking() {
    let dir = corpus();
    let entries = entries();
    let labels = by_id(&dir.join("expected.jsonl"));
    let known_path = dir.join("known_differences.jsonl");
    let known = if known_path.exists() {
        by_id(&known_path)
    } else {
        BTreeMap::new()
    };
    assert_eq!(entries.len(), labels.len(), "one label per entry");

    let cfg = Config::default();
    let mut exact = 0;
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut differences = Vec::new();
    for e in &entries {
        let id = e["id"].as_str().expect("entry id");
        let got = calls_at_every_chunking(e, &cfg);
        let label = labels
            .get(id)
            .unwrap_or_else(|| panic!("{id}: no label in corpus/expected.jsonl"));
        let want: Vec<Value> = label["calls"].as_array().expect("label calls").clone();
        if got == want {
            exact += 1;
            if known.contains_key(id) {
                failures.push(format!(
                    "{id}: now matches its label; remove it from known_differences.jsonl"
                ));
            }
            continue;
        }
        let k = kind(&got, &want);
        *by_kind.entry(k).or_default() += 1;
        let reason = known
            .get(id)
            .and_then(|v| v["reason"].as_str())
            .unwrap_or("")
            .to_owned();
        differences.push(json!({"id": id, "kind": k, "got": got, "label": want, "reason": reason}));
        match known.get(id) {
            Some(k) if k["got"] == Value::Array(got.clone()) => {}
            Some(_) => failures.push(format!(
                "{id}: calls changed from the recorded difference: got {}",
                Value::Array(got)
            )),
            None => failures.push(format!(
                "{id}: differs from its label: got {} want {}",
                Value::Array(got),
                Value::Array(want)
            )),
        }
    }
    for id in known.keys() {
        if !labels.contains_key(id) {
            failures.push(format!(
                "{id}: in known_differences.jsonl but not in the corpus"
            ));
        }
    }
    println!(
        "golden: {exact}/{} entries give exactly their labelled calls; differences by kind: {by_kind:?}",
        entries.len()
    );
    write_or_check(&known_path, &differences, &failures);
}

#[test]
fn real_corpus_with_its_tools() {
    let dir = corpus();
    let entries = entries();
    let labels = by_id(&dir.join("expected.jsonl"));
    let effects_path = dir.join("tool_effects.jsonl");
    let recorded = by_id(&effects_path);
    let plain = Config::default();
    let mut exact = 0;
    let mut effects = Vec::new();
    let mut failures = Vec::new();
    for e in &entries {
        let id = e["id"].as_str().expect("entry id");
        let tools = Tools::from_value(&e["tools"])
            .unwrap_or_else(|err| panic!("{id}: its tool list does not load: {err}"));
        let with = calls_at_every_chunking(e, &Config::default().with_tools(tools));
        let want = labels
            .get(id)
            .unwrap_or_else(|| panic!("{id}: no label in corpus/expected.jsonl"))["calls"]
            .clone();
        if Value::Array(with.clone()) == want {
            exact += 1;
        }
        let without = calls_at_every_chunking(e, &plain);
        if with == without {
            if recorded.contains_key(id) {
                failures.push(format!(
                    "{id}: the tools no longer change its calls; remove it from tool_effects.jsonl"
                ));
            }
            continue;
        }
        let closer = if Value::Array(with.clone()) == want {
            "with"
        } else if Value::Array(without.clone()) == want {
            "without"
        } else {
            "neither"
        };
        let reason = recorded
            .get(id)
            .and_then(|v| v["reason"].as_str())
            .unwrap_or("")
            .to_owned();
        let effect = json!({"id": id, "label_matches": closer, "without": without, "with": with, "reason": reason});
        match recorded.get(id) {
            Some(r) if r["without"] == effect["without"] && r["with"] == effect["with"] => {}
            Some(_) => failures.push(format!(
                "{id}: calls changed from the recorded effect: {effect}"
            )),
            None => failures.push(format!("{id}: the tools change its calls: {effect}")),
        }
        effects.push(effect);
    }
    println!(
        "golden with the entries' tools: {exact}/{} entries give exactly their labelled calls; the tools change the calls of {}",
        entries.len(),
        effects.len()
    );
    write_or_check(&effects_path, &effects, &failures);
}
