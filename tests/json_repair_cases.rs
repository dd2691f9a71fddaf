//! json_repair's own test cases (`../shared/json-repair-cases/json_repair.jsonl`:
//! 464 input/expected pairs from the pytest suite of the Python `json-repair`
//! package, MIT, Copyright (c) 2023 Stefano Baccianella) run through
//! [`toolstream::json::repair_document`], the function behind
//! `toolstream repair`.
//!
//! Every row, whatever its options (schemas, strict mode: toolstream has
//! neither), must keep the contracts: no panic, valid JSON or a clean
//! "no JSON found", and the same result fed whole, in 1-byte and in 7-byte
//! chunks.
//!
//! The rows json_repair answers with its defaults (no schema, not strict,
//! not `stream_stable`) are also compared with its expected values (decoded,
//! numbers compared numerically). Those rows encode json_repair's policies,
//! and toolstream answers some ambiguous inputs on purpose differently (see
//! the README's repair policies), so each row where it differs is listed in
//! `tests/data/json_repair_differences.jsonl` with the policy it follows and
//! the result it gives. The test fails when a row not listed differs, or a
//! listed row gives another result than the one recorded there — any change
//! of behaviour on these inputs, better or worse, is made on purpose.
//! `TOOLSTREAM_JSON_REPAIR_WRITE=1` rewrites the recorded results (keeping
//! the policies written; a new row gets `unreviewed`, which fails the test
//! until a policy is written for it). The test prints the agreement.
//!
//! Skipped, with a message, without `../shared`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use toolstream::json::repair_document;

/// The policies a listed difference may name, with what each means.
const POLICIES: &[(&str, &str)] = &[
    (
        "jsonrepair_rules",
        "where the two repairers disagree, the JavaScript jsonrepair's rule is followed: a quote \
         followed by the next value (a quote or a digit) ends a string value, a key with no value at \
         the end of a document is kept with null, a `,` and a quote in a string value that is followed \
         by neither a delimiter nor a next value end the string before the comma (its closing \
         quote was left out: `\"a\": \"x, \"b\": 1`)",
    ),
    ("null_for_missing", "a missing value is null, not \"\""),
    (
        "values_as_array",
        "several top-level values are returned as a JSON array, not merged or reduced to one",
    ),
    (
        "no_retraction",
        "output is append-only: a quote or bracket already read as content is not reread as \
         structure when later bytes suggest it (json_repair looks back and ahead)",
    ),
    (
        "parentheses_not_json",
        "`( )` are not JSON brackets in the JSON repairer (the pythonic dialect reads tuples)",
    ),
    (
        "words_kept",
        "bare words inside an object are read as keys or values, not dropped",
    ),
    (
        "not_a_number",
        "text that is not a JSON number (`1_000`) is kept as a string",
    ),
    (
        "text_kept",
        "string content and backslashes are kept as written (a line break before a closing \
         quote, `\\„`, the backslashes of an escaped document)",
    ),
    (
        "closed_stays_closed",
        "an object closed by its `}` is complete: members written after it are text, not merged back",
    ),
    (
        "truncation_closed",
        "what a cut input opened is closed at its end (a cut string is kept, a cut key dropped)",
    ),
    (
        "no_schema_modes",
        "json_repair's schema modes (an error when no schema is given) do not exist here",
    ),
    (
        "scalar_documents",
        "a document that is a literal or a quoted string is repaired as that value",
    ),
    (
        "shape_kept",
        "the container the model opened is kept (`[\"k\": \"v\"]` stays an array, `{'a', 'b'}` an object)",
    ),
];

#[path = "common/shared.rs"]
mod shared;

/// json_repair's cases; `None` (the skip is reported) without `../shared`.
fn rows() -> Option<Vec<Value>> {
    let path = shared::path("json-repair-cases/json_repair.jsonl")?;
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("a JSON row"))
            .collect(),
    )
}

/// FNV-1a of the input: with the upstream source (file, line, test), the
/// row's key (several rows share a source line).
fn key(row: &Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in row["input"].as_str().unwrap_or_default().bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let source = row["source"].as_str().unwrap_or_default();
    let source = source.split_once(':').map_or(source, |(_, s)| s);
    format!("{source}#{h:016x}")
}

/// toolstream's result for `input`: the repaired JSON or `NO_JSON`, the
/// same whole and in 1- and 7-byte chunks.
fn result(input: &str) -> String {
    let run = |chunk| match repair_document(input.as_bytes(), chunk) {
        Ok(r) => {
            assert!(
                serde_json::from_str::<Value>(&r.json).is_ok(),
                "invalid JSON {:?} for {input:?}",
                r.json
            );
            r.json
        }
        Err(_) => "NO_JSON".to_owned(),
    };
    let whole = run(0);
    for chunk in [1, 7] {
        assert_eq!(run(chunk), whole, "{chunk}-byte chunks of {input:?}");
    }
    whole
}

/// JSON values equal, numbers compared as numbers (`2` = `2.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The row is answered with json_repair's defaults, by a public entry point.
fn comparable(row: &Value) -> bool {
    let o = &row["options"];
    ["schema", "strict", "stream_stable"]
        .iter()
        .all(|k| o.get(k).is_none())
        && matches!(row["api"].as_str(), Some("repair_json" | "from_file"))
}

/// Does `got` give what json_repair expects for the row?
fn agrees(row: &Value, got: &str) -> bool {
    match row["compare"].as_str() {
        Some("empty" | "error") => got == "NO_JSON",
        _ => {
            let want: Value =
                serde_json::from_str(row["expected"].as_str().expect("expected JSON"))
                    .expect("expected JSON");
            serde_json::from_str::<Value>(got).is_ok_and(|v| same(&v, &want))
        }
    }
}

#[test]
fn json_repair_cases() {
    let Some(rows) = rows() else {
        return;
    };
    let list_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/json_repair_differences.jsonl");
    let listed: BTreeMap<String, Value> = std::fs::read_to_string(&list_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            (v["key"].as_str().expect("key").to_owned(), v)
        })
        .collect();
    let write = std::env::var_os("TOOLSTREAM_JSON_REPAIR_WRITE").is_some();
    let (mut compared, mut agree) = (0, 0);
    let mut differences: BTreeMap<String, Value> = BTreeMap::new();
    let mut failures = Vec::new();
    for row in &rows {
        let input = row["input"].as_str().expect("input");
        let got = result(input);
        if !comparable(row) {
            continue;
        }
        compared += 1;
        let k = key(row);
        if agrees(row, &got) {
            agree += 1;
            if listed.contains_key(&k) {
                failures.push(format!("{k}: now agrees with json_repair; unlist it"));
            }
            continue;
        }
        let policy = listed
            .get(&k)
            .and_then(|l| l["policy"].as_str())
            .unwrap_or("unreviewed")
            .to_owned();
        match listed.get(&k) {
            None => failures.push(format!(
                "{k}: {input:?} gives {got}, json_repair expects {}; not listed",
                row["expected"]
            )),
            Some(l) if l["got"] != json!(got) => failures.push(format!(
                "{k}: {input:?} now gives {got}, recorded {}",
                l["got"]
            )),
            Some(_) if !POLICIES.iter().any(|(p, _)| *p == policy) => {
                failures.push(format!("{k}: policy {policy:?} is not one of POLICIES"))
            }
            Some(_) => {}
        }
        differences.insert(k.clone(), json!({"key": k, "policy": policy, "got": got}));
    }
    let mut by_policy: BTreeMap<&str, usize> = BTreeMap::new();
    for d in differences.values() {
        *by_policy
            .entry(d["policy"].as_str().unwrap_or_default())
            .or_default() += 1;
    }
    println!(
        "json_repair's cases: {} rows keep the contracts; of the {compared} answered with its defaults, \
         toolstream agrees on {agree}; differences by policy: {by_policy:?}",
        rows.len()
    );
    if write {
        let text: String = differences.values().map(|d| format!("{d}\n")).collect();
        std::fs::write(&list_path, text).expect("write the differences");
        println!("rewrote {}", list_path.display());
        return;
    }
    for k in listed.keys() {
        if !differences.contains_key(k) && !failures.iter().any(|f| f.starts_with(k.as_str())) {
            failures.push(format!("{k}: listed, but no such row differs"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} json_repair case(s) changed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
