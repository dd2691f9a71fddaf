//! Replays the real-model evidence run (`corpus/toolkit/evidence/`, recorded
//! by `run.py` with llama-cpp-python on SmolLM2-135M-Instruct and
//! Gemma-3-270M-it): every recorded reply is parsed with the dialect the
//! registry names for its prompt format, scored with RFC-136's metrics, and
//! the table is compared with `summary.md` (regenerate with
//! `UPDATE_GOLDEN=1`).
#![cfg(feature = "toolkit")]

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use toolstream::toolkit::convert::{parser_tools, read_tools};
use toolstream::toolkit::planning::intent::{infer, IntentOptions};
use toolstream::toolkit::{EmulationFormat, Tool};
use toolstream::{parse, Config};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/toolkit/evidence")
}

/// Whether `args` is valid for `tool`: required keys present, no unknown
/// keys, declared types right.
fn valid(tool: &Tool, args: &Value) -> bool {
    let Some(o) = args.as_object() else {
        return false;
    };
    let props: BTreeMap<&String, &Value> = tool.properties().collect();
    for (k, p) in &props {
        if tool.is_required(k) && !o.contains_key(k.as_str()) {
            return false;
        }
        if let Some(v) = o.get(k.as_str()) {
            let ok = match p.get("type").and_then(Value::as_str) {
                Some("string") => v.is_string(),
                Some("integer") => v.is_i64() || v.is_u64(),
                Some("number") => v.is_number(),
                Some("boolean") => v.is_boolean(),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
    }
    o.keys().all(|k| props.contains_key(k))
}

#[derive(Default)]
struct Row {
    n: usize,
    any: usize,
    right_tool: usize,
    valid: usize,
    params: usize,
    placeholder: usize,
    fallback: usize,
}

#[test]
fn replay_real_model_replies() {
    let replies_path = dir().join("replies.jsonl");
    let Ok(replies) = std::fs::read_to_string(&replies_path) else {
        eprintln!(
            "skipped: {} not recorded (run corpus/toolkit/evidence/run.py)",
            replies_path.display()
        );
        return;
    };
    let tasks: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir().join("tasks.json")).unwrap()).unwrap();
    assert!(tasks.len() >= 30);
    let mut tool_sets: BTreeMap<String, Vec<Tool>> = BTreeMap::new();
    for t in &tasks {
        let f = t["tools"].as_str().unwrap().to_owned();
        tool_sets.entry(f.clone()).or_insert_with(|| {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(dir().join(&f)).unwrap()).unwrap();
            read_tools(&v).unwrap()
        });
    }
    let mut table: BTreeMap<(String, String, String), Row> = BTreeMap::new();
    for line in replies.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let task = tasks
            .iter()
            .find(|t| t["id"] == r["task"])
            .expect("task of a reply");
        let tools = &tool_sets[task["tools"].as_str().unwrap()];
        let variant = r["variant"].as_str().unwrap();
        // The baseline (RFC-136's placeholder prompt) asks for the JSON format.
        let format = EmulationFormat::from_name(variant.split('/').next().unwrap())
            .unwrap_or(EmulationFormat::Json);
        let cfg = Config::default()
            .with_dialects(vec![format.dialect()])
            .with_tools(parser_tools(tools));
        let calls = parse(r["reply"].as_str().unwrap().as_bytes(), &cfg).calls;
        let want = task["tool"].as_str().unwrap();
        let row = table
            .entry((
                r["model"].as_str().unwrap().into(),
                variant.into(),
                task["tier"].as_str().unwrap().into(),
            ))
            .or_default();
        row.n += 1;
        row.any += usize::from(!calls.is_empty());
        row.right_tool += usize::from(calls.first().is_some_and(|c| c.name == want));
        let spec = tools.iter().find(|t| t.name == want).unwrap();
        let good = calls.iter().find_map(|c| {
            let a = c.arguments_value().ok()?;
            (c.name == want && valid(spec, &a)).then_some(a)
        });
        row.valid += usize::from(good.is_some());
        // With the opt-in text-intent fallback (seed 003 approach 4).
        let inferred = if good.is_some() {
            good.clone()
        } else if calls.is_empty() {
            infer(
                r["reply"].as_str().unwrap(),
                tools,
                &IntentOptions { enabled: true },
            )
            .filter(|c| c.name == want && valid(spec, &c.arguments))
            .map(|c| c.arguments)
        } else {
            None
        };
        row.fallback += usize::from(inferred.is_some());
        if let Some(a) = &good {
            let all = task["expect"].as_object().unwrap().iter().all(|(k, v)| {
                a.get(k).and_then(Value::as_str).is_some_and(|s| {
                    s.to_ascii_lowercase()
                        .contains(&v.as_str().unwrap().to_ascii_lowercase())
                })
            });
            row.params += usize::from(all);
        }
        row.placeholder += usize::from(calls.iter().any(|c| {
            c.name == "tool_name" || c.arguments.contains("arg1") || c.arguments.contains("value1")
        }));
    }
    let pct = |a: usize, n: usize| format!("{:.0} %", 100.0 * a as f64 / n.max(1) as f64);
    let mut md = String::from(
        "# Real-model evidence: emulation prompts on the smallest models\n\n\
         Generated by `tests/toolkit_evidence.rs` from `replies.jsonl` (recorded by `run.py`; provenance in\n\
         `provenance.json`). Each reply is parsed with the dialect the registry names for its prompt format\n\
         (`baseline` = RFC-136's placeholder prompt, parsed as JSON). Columns: replies; with any call; first call\n\
         names the right tool (tool selection accuracy); a call of the right tool valid against its schema\n\
         (first-attempt success); that call also has the expected values (parameter accuracy); calls copying the\n\
         placeholders `tool_name`/`arg1`/`value1`; a valid call of the right tool once the opt-in text-intent\n\
         fallback (`planning::intent`) reads replies without a call.\n\n\
         | model | prompt | tier | n | any call | right tool | valid call | right params | placeholder copies | valid with fallback |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((m, v, tier), r) in &table {
        md.push_str(&format!(
            "| {m} | {v} | {tier} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.n,
            pct(r.any, r.n),
            pct(r.right_tool, r.n),
            pct(r.valid, r.n),
            pct(r.params, r.n),
            r.placeholder,
            pct(r.fallback, r.n)
        ));
    }
    let path = dir().join("summary.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &md).unwrap();
    } else {
        let want = std::fs::read_to_string(&path).expect("summary.md (run with UPDATE_GOLDEN=1)");
        assert_eq!(want, md, "the recorded replies no longer give summary.md");
    }
}
