//! Property: for a random schema, random arguments valid against it and
//! every named profile, simplify → flatten the arguments → restore gives
//! the original arguments back, and the flattened arguments use only keys the simplified schema
//! declares.
#![cfg(feature = "toolkit")]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolstream::toolkit::simplify::{simplify, Profile, SimplifyOptions};
use toolstream::toolkit::Tool;

/// A small deterministic generator driven by proptest's seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
}

const NAMES: &[&str] = &[
    "path", "mode", "opts", "a", "b", "deep", "x.y", "limit", "tags", "a.b",
];

fn schema(r: &mut Rng, depth: u32) -> Value {
    let kind = if depth >= 3 { r.below(5) } else { r.below(7) };
    match kind {
        0 => json!({"type": "string", "description": "some text"}),
        1 => json!({"type": "integer"}),
        2 => json!({"type": "boolean"}),
        3 => json!({"type": "string", "enum": ["r", "w", "a"], "description": "the mode"}),
        4 => json!({"type": "array", "items": {"type": "number"}}),
        _ => object(r, depth + 1),
    }
}

fn object(r: &mut Rng, depth: u32) -> Value {
    let n = 1 + r.below(4) as usize;
    let mut props = Map::new();
    let mut req = Vec::new();
    for _ in 0..n {
        let name = NAMES[r.below(NAMES.len() as u64) as usize];
        if props.contains_key(name) {
            continue;
        }
        props.insert(name.into(), schema(r, depth));
        if r.coin() {
            req.push(Value::String(name.into()));
        }
    }
    let mut o = json!({"type": "object", "properties": props, "required": req});
    if r.coin() {
        o["additionalProperties"] = Value::Bool(false);
    }
    o
}

/// Arguments valid against `s`; optional keys only `with_optional` (a
/// profile that removes optional parameters is called without them).
fn value(r: &mut Rng, s: &Value, with_optional: bool) -> Value {
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e[r.below(e.len() as u64) as usize].clone();
    }
    match s["type"].as_str() {
        Some("string") => Value::String(["", "a b", "x.y", "ü"][r.below(4) as usize].into()),
        Some("integer") => json!(r.below(100) as i64 - 50),
        Some("boolean") => json!(r.coin()),
        Some("array") => Value::Array((0..r.below(3)).map(|i| json!(i as f64 + 0.5)).collect()),
        _ => {
            let req: Vec<&str> = s["required"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut o = Map::new();
            for (k, p) in s["properties"].as_object().unwrap() {
                if req.contains(&k.as_str()) || (with_optional && r.coin()) {
                    o.insert(k.clone(), value(r, p, with_optional));
                }
            }
            Value::Object(o)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn simplify_flatten_restore_is_identity(seed in any::<u64>(), profile in 0usize..Profile::NAMES.len() + 1) {
        let mut r = Rng(seed);
        let root = object(&mut r, 0);
        // Every named profile, and 003's default with another separator.
        let opts = match Profile::NAMES.get(profile) {
            Some(name) => Profile::named(name).unwrap().options,
            None => SimplifyOptions { separator: "__".into(), ..SimplifyOptions::default() },
        };
        let args = value(&mut r, &root, !opts.remove_optional);
        let tool = Tool::new("t", "A tool.", root);
        let s = simplify(&tool, &opts);
        let flat = s.flatten_args(&args);
        let declared = s.tool.parameters["properties"].as_object().unwrap();
        for k in flat.as_object().unwrap().keys() {
            prop_assert!(declared.contains_key(k), "undeclared key {k} in {flat} for {}", s.tool.parameters);
        }
        let required: Vec<&str> = s.tool.parameters["required"].as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        for k in required {
            prop_assert!(flat.get(k).is_some(), "required {k} missing in {flat}");
        }
        prop_assert_eq!(s.restore(&flat), args);
    }
}

#[test]
fn removing_optional_parameters_keeps_calls_valid() {
    let tool = Tool::new(
        "Read",
        "Read a file.",
        json!({"type": "object", "properties": {
            "file_path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}
        }, "required": ["file_path"]}),
    );
    let s = simplify(&tool, &Profile::named("gpt-oss-20b").unwrap().options);
    let call = json!({"file_path": "/etc/hosts"});
    assert_eq!(s.restore(&call), call);
    assert_eq!(s.removed, [".offset", ".limit"]);
}

/// Found by the property test (seed 1707063466098308071): a top-level key
/// holding the separator (`a.b`) was flattened into `a.b.path`, which an
/// object `a` flattened beside it could claim on the way back.
#[test]
fn a_key_holding_the_separator_is_not_flattened() {
    let obj = |req: &str| json!({"type": "object", "properties": {"path": {"type": "boolean"}, "opts": {"type": "string"}}, "required": [req]});
    let root = json!({"type": "object", "properties": {
        "a.b": obj("path"),
        "a": {"type": "object", "properties": {"path": {"type": "object"}, "b.path": {"type": "boolean"}}, "required": ["path"]}
    }, "required": ["a.b", "a"]});
    let tool = Tool::new("t", "A tool.", root);
    let s = simplify(&tool, &SimplifyOptions::default());
    let declared = s.tool.parameters["properties"].as_object().unwrap();
    assert!(declared.contains_key("a.b"), "{}", s.tool.parameters);
    for args in [
        json!({"a.b": {"path": true, "opts": "x.y"}, "a": {"path": {}}}),
        json!({"a.b": {"path": false}, "a": {"path": {}, "b.path": true}}),
    ] {
        let flat = s.flatten_args(&args);
        assert_eq!(s.restore(&flat), args, "{flat}");
    }
}
