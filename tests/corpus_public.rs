//! Runs the public corpus rows (`../shared/corpus/public/*.jsonl`, read at
//! run time, never copied into this repository) through the parser in auto
//! mode: no panic, every contract holds at every chunking, and per dialect
//! of the special-token and pythonic families how many rows yield calls
//! (the other rows are checked too and counted together). Rows of BFCL
//! tests are also run with the tools the model was offered.
//!
//! Skipped, with a message, when the corpus is not there. Set
//! `TOOLSTREAM_CORPUS_DUMP=path` to write the extracted calls per row (JSON
//! lines) for scoring with `../shared/tools/bfcl_check.py`.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use serde_json::Value;
use toolstream::{Config, Tools};

/// The `dialect_guess` values this suite covers.
const GUESSES: &[&str] = &[
    "pythonic",
    "harmony",
    "deepseek",
    "mistral",
    "llama3_json",
    "unknown",
];

/// The public corpus folder; when a clone lacks it, the skip is reported
/// (`common::shared`) and None.
fn corpus_dir() -> Option<PathBuf> {
    common::shared::path("corpus/public")
}

fn read_rows(dir: &PathBuf) -> (Vec<Value>, HashMap<String, Value>) {
    let mut rows = Vec::new();
    let mut truth = HashMap::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("corpus file");
        let is_truth = f
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains("ground_truth"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                // A ground-truth record with a number serde_json cannot
                // hold: that row is run without its tools.
                Err(_) if is_truth => continue,
                Err(e) => panic!("corpus row is not JSON: {e}"),
            };
            if is_truth {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    truth.insert(id.to_owned(), v);
                }
            } else {
                rows.push(v);
            }
        }
    }
    (rows, truth)
}

#[derive(Default)]
struct Tally {
    rows: usize,
    real: usize,
    with_calls: usize,
    real_with_calls: usize,
    calls: usize,
    with_calls_tools: usize,
    rows_tools: usize,
}

#[test]
fn corpus_public_rows() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let (rows, truth) = read_rows(&dir);
    let dump_path = std::env::var("TOOLSTREAM_CORPUS_DUMP").ok();
    let mut dump = dump_path
        .as_ref()
        .map(|p| std::fs::File::create(p).expect("dump file"));
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for row in &rows {
        let guess = row["dialect_guess"].as_str().unwrap_or_default();
        // Every other row is checked for the contracts too (auto mode has
        // all triggers active), and counted under "other".
        let guess = if GUESSES.contains(&guess) {
            guess
        } else {
            "(other)"
        };
        let id = row["id"].as_str().unwrap_or_default().to_owned();
        let raw = row["raw_output"].as_str().unwrap_or_default();
        let real = row["real"].as_bool().unwrap_or(false);
        checked += 1;
        if std::env::var_os("TOOLSTREAM_CORPUS_VERBOSE").is_some() {
            eprintln!("row {id} ({} bytes)", raw.len());
        }
        let run = |cfg: &Config| {
            catch_unwind(AssertUnwindSafe(|| common::check_all(raw.as_bytes(), cfg)))
        };
        let parsed = match run(&Config::default()) {
            Ok(p) => p,
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                failures.push(format!("{id}: {}", msg.lines().next().unwrap_or_default()));
                continue;
            }
        };
        let t = tally.entry(guess.to_owned()).or_default();
        t.rows += 1;
        t.real += usize::from(real);
        t.calls += parsed.calls.len();
        if !parsed.calls.is_empty() {
            t.with_calls += 1;
            t.real_with_calls += usize::from(real);
        }
        // With the tools the model was offered (BFCL rows).
        let tools = truth
            .get(&id)
            .and_then(|r| r.get("tools"))
            .and_then(|v| Tools::from_value(v).ok());
        let mut tool_calls = None;
        if let Some(tools) = tools {
            t.rows_tools += 1;
            match run(&Config::default().with_tools(tools)) {
                Ok(p) => {
                    t.with_calls_tools += usize::from(!p.calls.is_empty());
                    tool_calls = Some(p.calls);
                }
                Err(_) => failures.push(format!("{id}: panic or contract failure with tools")),
            }
        }
        if let Some(f) = dump.as_mut() {
            let calls = |cs: &[toolstream::ToolCall]| -> Vec<Value> {
                cs.iter()
                    .map(|c| serde_json::json!({"name": c.name, "arguments": c.arguments}))
                    .collect()
            };
            let line = serde_json::json!({
                "id": id,
                "dialect_guess": guess,
                "calls": calls(&parsed.calls),
                "calls_with_tools": tool_calls.as_deref().map(calls),
            });
            writeln!(f, "{line}").expect("dump write");
        }
    }
    eprintln!("public corpus, auto mode ({checked} rows checked at 6 chunkings each):");
    eprintln!(
        "{:<12} {:>5} {:>5} {:>10} {:>14} {:>6} {:>18}",
        "dialect", "rows", "real", "with calls", "real w/ calls", "calls", "w/ calls (+tools)"
    );
    for (d, t) in &tally {
        eprintln!(
            "{:<12} {:>5} {:>5} {:>10} {:>14} {:>6} {:>18}",
            d,
            t.rows,
            t.real,
            t.with_calls,
            t.real_with_calls,
            t.calls,
            format!("{}/{}", t.with_calls_tools, t.rows_tools)
        );
    }
    assert!(
        checked > 0,
        "no corpus rows of the covered dialects were found"
    );
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The dialect a row's prompt asked for (its `note` names the prompt), as
/// a server configured for that model would restrict parsing to it.
fn prompted_dialect(note: &str) -> Option<toolstream::Dialect> {
    use toolstream::Dialect;
    let prompt = note.split("prompted dialect: ").nth(1)?.split(';').next()?;
    Some(match prompt {
        "BFCL prompt '[func(arg=val), ...]'" => Dialect::Pythonic,
        "hermes <tool_call> JSON" | "granite '<function_call> {json}'" => Dialect::Hermes,
        "xLAM {\"tool_calls\": [...]} JSON" => Dialect::Json,
        "GLM-4 'name\\n{json}'" => Dialect::ChatGlm,
        _ => return None,
    })
}

/// USER-ISSUES 2.7, dialect drift: a model writes another format than the
/// one the parser is configured for (BFCL's pythonic prompt answered with
/// JSON, Hermes 2 Theta writing `<|im_start|>` where `<tool_call>` belongs).
/// Each row is parsed with only its prompted dialect enabled: it yields
/// calls that dialect reads, or passes through whole — every byte text
/// except the chat-template tokens that dialect reports as markup — never
/// a half-read call, at every chunking (`check_all`). Prints the counts.
#[test]
fn dialect_drift_passes_through() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let (rows, _) = read_rows(&dir);
    let mut counts: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for row in &rows {
        let Some(d) = prompted_dialect(row["note"].as_str().unwrap_or_default()) else {
            continue;
        };
        let guess = row["dialect_guess"].as_str().unwrap_or_default();
        let same = match d {
            toolstream::Dialect::Pythonic => guess == "pythonic",
            toolstream::Dialect::Hermes => guess == "hermes",
            toolstream::Dialect::Json => guess.starts_with("json_"),
            _ => false,
        };
        if same {
            continue;
        }
        let raw = row["raw_output"].as_str().unwrap_or_default();
        let id = row["id"].as_str().unwrap_or_default();
        let p = common::check_all(raw.as_bytes(), &Config::default().with_dialects(vec![d]));
        let c = counts
            .entry((d.name().to_owned(), guess.to_owned()))
            .or_default();
        if !p.calls.is_empty() {
            c.0 += 1;
            continue;
        }
        c.1 += 1;
        let mut outside_markup = Vec::new();
        let mut at = 0;
        for e in &p.events {
            if let toolstream::Event::Markup { span } = e {
                outside_markup.extend_from_slice(&raw.as_bytes()[at..span.start as usize]);
                at = span.end as usize;
            }
        }
        outside_markup.extend_from_slice(&raw.as_bytes()[at..]);
        assert_eq!(
            p.text.as_bytes(),
            &outside_markup[..],
            "{id}: configured {d:?}, no call, yet not all text"
        );
        assert!(p.thinking.is_empty(), "{id}: thinking from a drifted row");
    }
    eprintln!("dialect drift (prompted dialect only; rows whose output is another format):");
    eprintln!(
        "{:<10} {:<14} {:>6} {:>13}",
        "prompted", "written", "calls", "passed as text"
    );
    for ((d, g), (calls, text)) in &counts {
        eprintln!("{d:<10} {g:<14} {calls:>6} {text:>13}");
    }
    assert!(!counts.is_empty(), "no drifted rows found");
}
