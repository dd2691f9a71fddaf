//! BFCL score: runs the public BFCL rows of `../shared/corpus/public` (real
//! outputs of 80 model configurations) through the parser with the tools
//! each model was offered, and scores the calls with BFCL's rules
//! (`../shared/tools/bfcl_check.py`, driven by `tests/bfcl_score.py`).
//!
//! Two numbers, over the rows BFCL scored itself:
//! * **kept** — of the rows expecting calls that BFCL's own decoder and
//!   checker passed, how many still pass with toolstream's calls. Must not fall below the floor in
//!   `tests/data/bfcl_floor.json`.
//! * **rescued** — of the rows BFCL's decoder could not parse, how many
//!   toolstream turns into calls that pass BFCL's checker. Also ratcheted by
//!   the floor file; raise both floors when they improve.
//!
//! Relevance rows (no call expected) are reported apart: BFCL passes any
//! output its decoder cannot parse, so a broken call the model wrote where
//! none was expected passes BFCL and fails here, by design.
//!
//! Skipped, with a message, without `../shared` or `python3`.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};
use toolstream::{parse, Config, Tools};

#[path = "common/shared.rs"]
mod shared;

/// `../shared`, with the BFCL checker and ground truth; `None` (the skip is
/// reported) when absent.
fn shared() -> Option<PathBuf> {
    shared::path("tools/bfcl_check.py")?;
    shared::path("corpus/public/bfcl_ground_truth.jsonl")?;
    Some(shared::root())
}

fn jsonl(path: &std::path::Path) -> impl Iterator<Item = Value> {
    std::fs::read_to_string(path)
        .expect("readable jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        // A ground-truth record with a number serde_json cannot hold is
        // skipped; its row then runs without tools.
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect::<Vec<_>>()
        .into_iter()
}

#[test]
fn bfcl_passes_kept_and_failures_rescued() {
    let Some(shared) = shared() else {
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED: python3 is not installed; the BFCL score did not run");
        return;
    }
    let public = shared.join("corpus/public");
    let truth: std::collections::HashMap<String, Value> =
        jsonl(&public.join("bfcl_ground_truth.jsonl"))
            .filter_map(|r| Some((r["id"].as_str()?.to_owned(), r)))
            .collect();
    let mut files: Vec<_> = std::fs::read_dir(&public)
        .expect("public corpus")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("bfcl_") && n.ends_with(".jsonl") && !n.contains("ground_truth")
        })
        .collect();
    files.sort();

    let dump = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bfcl_calls.jsonl");
    let mut out = std::fs::File::create(&dump).expect("dump file");
    let mut rows = 0;
    for f in &files {
        for row in jsonl(f) {
            let id = row["id"].as_str().unwrap_or_default();
            let Some(rec) = truth.get(id) else { continue };
            let raw = row["raw_output"].as_str().unwrap_or_default();
            let cfg = match Tools::from_value(&rec["tools"]) {
                Ok(tools) => Config::default().with_tools(tools),
                Err(_) => Config::default(),
            };
            let calls: Vec<Value> = parse(raw.as_bytes(), &cfg)
                .calls
                .iter()
                .map(|c| {
                    json!({
                        "name": c.name,
                        "arguments": c.arguments_value().expect("valid JSON arguments"),
                    })
                })
                .collect();
            writeln!(out, "{}", json!({"id": id, "calls": calls})).expect("dump write");
            rows += 1;
        }
    }
    drop(out);
    assert!(rows > 0, "no BFCL rows with ground truth were found");

    let run = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bfcl_score.py"))
        .arg(&dump)
        .arg(&shared)
        .output()
        .expect("run tests/bfcl_score.py");
    assert!(
        run.status.success(),
        "bfcl_score.py failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let score: Value = serde_json::from_slice(&run.stdout).expect("score JSON");
    let n = |k: &str| score[k].as_u64().expect("count");
    println!(
        "BFCL ({rows} rows with ground truth): BFCL passes kept {}/{}; decoder failures rescued {}/{}; \
         checker failures that now pass {}/{}",
        n("kept"),
        n("bfcl_pass"),
        n("rescued"),
        n("decoder_failed"),
        n("checker_fail_now_pass"),
        n("bfcl_checker_fail"),
    );
    println!(
        "BFCL relevance rows (no call expected) passed by BFCL: {}/{} still pass; the others hold \
         a call the model wrote that BFCL's decoder could not read: {}",
        n("relevance_kept"),
        n("relevance_bfcl_pass"),
        score["relevance_lost"]
    );
    println!("BFCL passes lost: {}", score["lost"]);

    let floor: Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bfcl_floor.json"),
        )
        .expect("tests/data/bfcl_floor.json"),
    )
    .expect("floor JSON");
    for k in ["kept", "rescued"] {
        let min = floor[k].as_u64().expect("floor count");
        assert!(n(k) >= min, "BFCL {k} fell from {min} to {}", n(k));
    }
}
