//! The normalizer on real model output: `corpus/real/` (SmolLM2-135M and
//! Gemma-3-270M), its labels (`corpus/expected.jsonl`), and the public
//! BFCL rows of `../shared/corpus/public/` with the tools each model was
//! offered.
//!
//! Checked: a call that is valid as parsed (strict mode finds no problem)
//! gets no repair and keeps its arguments byte for byte; the streaming
//! normalizer, fed the parser's events at the chunking the model streamed,
//! gives what the one-shot API gives; on BFCL, no row that passes BFCL's
//! checker as parsed fails once normalized. Printed: how many calls were
//! valid as parsed, how many normalization made valid, and how many end
//! with which error kinds (the numbers in docs/normalize.md).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use toolstream::normalize::{read_tools_value, Catalog, Normalizer, Options};
use toolstream::{parse, parse_chunks, Config, Event, ToolCall, Tools};

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Tallies of one corpus.
#[derive(Default, Debug)]
struct Tally {
    calls: usize,
    valid_as_parsed: usize,
    made_valid: usize,
    invalid: usize,
    /// Calls left invalid, by the kind of their first error.
    error_kinds: BTreeMap<String, usize>,
    fix_kinds: BTreeMap<String, usize>,
}

impl Tally {
    fn print(&self, what: &str) {
        println!(
            "{what}: {} calls; valid as parsed {}; made valid {}; still invalid {} (first error: {:?}); repairs made: {:?}",
            self.calls, self.valid_as_parsed, self.made_valid, self.invalid, self.error_kinds, self.fix_kinds
        );
    }
}

/// Normalizes `call` with `tools`, checks the contracts, and counts it.
fn check_call(call: &ToolCall, strict: &Catalog, cat: &Catalog, tally: &mut Tally) -> ToolCall {
    let (s, strict_report) = strict.normalize_call(call);
    let (n, report) = cat.normalize_call(call);
    tally.calls += 1;
    for f in &report.fixes {
        *tally.fix_kinds.entry(f.kind.to_string()).or_default() += 1;
    }
    // Valid as parsed: strict mode finds no problem and makes no repair.
    if strict_report.is_ok() && strict_report.fixes.is_empty() {
        tally.valid_as_parsed += 1;
        assert!(
            report.fixes.is_empty(),
            "a valid call was repaired: {call:?} {:?}",
            report.fixes
        );
        assert_eq!(n.arguments, call.arguments, "a valid call changed");
        assert_eq!(s.arguments, call.arguments);
    } else if report.is_ok() {
        tally.made_valid += 1;
    } else {
        tally.invalid += 1;
        *tally
            .error_kinds
            .entry(report.errors[0].kind.to_string())
            .or_default() += 1;
    }
    n
}

fn catalogs(tools: &Tools) -> (Catalog, Arc<Catalog>) {
    (
        Catalog::with_options(tools, Options::strict()),
        Arc::new(Catalog::new(tools)),
    )
}

#[test]
fn corpus_real_valid_calls_untouched_and_streaming_equals_one_shot() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/real");
    let mut tally = Tally::default();
    let mut rows = 0;
    for file in ["smollm2-135m.jsonl", "gemma3-270m.jsonl"] {
        for row in jsonl(&dir.join(file)) {
            let Ok((tools, _)) = read_tools_value(&row["tools"]) else {
                continue;
            };
            rows += 1;
            let (strict, cat) = catalogs(&tools);
            let cfg = Config::default().with_tools(tools.clone());
            let chunks: Vec<String> =
                serde_json::from_value(row["chunks"].clone()).unwrap_or_default();
            let parsed = parse_chunks(chunks.iter().map(String::as_bytes), &cfg);
            // One-shot, call by call.
            let want: Vec<ToolCall> = parsed
                .calls
                .iter()
                .map(|c| check_call(c, &strict, &cat, &mut tally))
                .collect();
            // Streaming, on the parser's events at the model's chunking.
            let mut norm = Normalizer::new(cat.clone());
            let mut got = Vec::new();
            let mut deltas: HashMap<usize, String> = HashMap::new();
            for ev in parsed.events.iter().cloned() {
                for n in norm.push(ev) {
                    match n.event {
                        Event::ToolArgs { index, delta, .. } => deltas
                            .entry(index)
                            .or_default()
                            .push_str(std::str::from_utf8(&delta).unwrap()),
                        Event::ToolEnd { call, .. } => got.push(*call),
                        _ => {}
                    }
                }
            }
            assert_eq!(got, want, "{}", row["id"]);
            for c in &got {
                assert_eq!(
                    deltas.get(&c.index).map_or("", String::as_str),
                    c.arguments,
                    "{}",
                    row["id"]
                );
            }
        }
    }
    assert!(rows > 300, "corpus/real rows read: {rows}");
    tally.print("corpus/real");
}

#[test]
fn labelled_valid_calls_need_no_repair() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let tools_by_id: HashMap<String, Value> = ["smollm2-135m.jsonl", "gemma3-270m.jsonl"]
        .iter()
        .flat_map(|f| jsonl(&root.join("real").join(f)))
        .filter_map(|r| Some((r["id"].as_str()?.to_owned(), r["tools"].clone())))
        .collect();
    let mut tally = Tally::default();
    for label in jsonl(&root.join("expected.jsonl")) {
        let Some(tools) = label["id"].as_str().and_then(|id| tools_by_id.get(id)) else {
            continue;
        };
        let Ok((tools, _)) = read_tools_value(tools) else {
            continue;
        };
        let (strict, cat) = catalogs(&tools);
        for (i, c) in label["calls"].as_array().into_iter().flatten().enumerate() {
            let call = ToolCall {
                index: i,
                id: format!("call_{i}").into(),
                name: c["name"].as_str().unwrap_or_default().to_owned().into(),
                arguments: c["arguments"].to_string(),
                repairs: Vec::new(),
                truncated: false,
            };
            check_call(&call, &strict, &cat, &mut tally);
        }
    }
    assert!(tally.calls > 50, "labelled calls: {}", tally.calls);
    tally.print("corpus/expected.jsonl");
}

fn shared() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    (dir.join("tools/bfcl_check.py").is_file()
        && dir.join("corpus/public/bfcl_ground_truth.jsonl").is_file())
    .then_some(dir)
}

#[test]
fn public_bfcl_rows_counts_and_no_pass_lost() {
    let Some(shared) = shared() else {
        eprintln!("SKIPPED: ../shared (public corpus, BFCL checker) is not present");
        return;
    };
    let public = shared.join("corpus/public");
    let truth: HashMap<String, Value> = jsonl(&public.join("bfcl_ground_truth.jsonl"))
        .into_iter()
        .filter_map(|r| Some((r["id"].as_str()?.to_owned(), r)))
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&public)
        .expect("public corpus")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("bfcl_ground_truth.jsonl")
        })
        .collect();
    files.sort();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut plain = std::fs::File::create(tmp.join("bfcl_plain.jsonl")).unwrap();
    let mut normed = std::fs::File::create(tmp.join("bfcl_normalized.jsonl")).unwrap();
    let mut tally = Tally::default();
    let mut without_tools = 0usize;
    let mut not_python = 0usize;
    for f in &files {
        for row in jsonl(f) {
            let id = row["id"].as_str().unwrap_or_default();
            let raw = row["raw_output"].as_str().unwrap_or_default();
            let Some(tools) = truth
                .get(id)
                .and_then(|r| read_tools_value(&r["tools"]).ok())
                .map(|(t, _)| t)
            else {
                without_tools += parse(raw.as_bytes(), &Config::default()).calls.len();
                continue;
            };
            let parsed = parse(raw.as_bytes(), &Config::default().with_tools(tools.clone()));
            // BFCL's Java and JavaScript categories declare the target
            // language's types (`String`, `Array`, `any`) for arguments that
            // are always code strings (`"funcParameters"`, `"new String[]{…}"`):
            // not JSON Schema; their calls are counted apart, not normalized.
            let language = truth[id]["language"].as_str().unwrap_or("Python");
            if language != "Python" {
                not_python += parsed.calls.len();
                let calls: Vec<Value> = parsed.calls.iter().map(|c| json!({"name": c.name, "arguments": c.arguments_value().unwrap_or(Value::Null)})).collect();
                writeln!(plain, "{}", json!({"id": id, "calls": calls})).unwrap();
                writeln!(normed, "{}", json!({"id": id, "calls": calls})).unwrap();
                continue;
            }
            let (strict, cat) = catalogs(&tools);
            let as_json = |c: &ToolCall| json!({"name": c.name, "arguments": c.arguments_value().unwrap_or(Value::Null)});
            let before: Vec<Value> = parsed.calls.iter().map(as_json).collect();
            let after: Vec<Value> = parsed
                .calls
                .iter()
                .map(|c| as_json(&check_call(c, &strict, &cat, &mut tally)))
                .collect();
            writeln!(plain, "{}", json!({"id": id, "calls": before})).unwrap();
            writeln!(normed, "{}", json!({"id": id, "calls": after})).unwrap();
        }
    }
    drop((plain, normed));
    tally.print("public corpus (BFCL rows, with the tools offered)");
    println!("public corpus rows without tools (not normalized): {without_tools} calls");
    println!(
        "BFCL Java/JavaScript rows (code-string arguments, not normalized): {not_python} calls"
    );
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED: python3 is not installed; the BFCL comparison did not run");
        return;
    }
    let run = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/normalize_bfcl.py"))
        .arg(tmp.join("bfcl_plain.jsonl"))
        .arg(tmp.join("bfcl_normalized.jsonl"))
        .arg(&shared)
        .output()
        .expect("run tests/normalize_bfcl.py");
    assert!(
        run.status.success(),
        "normalize_bfcl.py: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let score: Value = serde_json::from_slice(&run.stdout).expect("score JSON");
    println!(
        "BFCL ({} rows): pass as parsed {}, normalized {}; gained {}, lost {}: {}",
        score["rows"],
        score["plain_pass"],
        score["normalized_pass"],
        score["gained"].as_array().map_or(0, Vec::len),
        score["lost"].as_array().map_or(0, Vec::len),
        score["lost"]
    );
    assert_eq!(score["lost"], json!([]), "BFCL rows lost by normalizing");
}
