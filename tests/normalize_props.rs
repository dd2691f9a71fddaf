//! Property tests of the normalizer's contracts, on the tool list Claude
//! Code really sends (`corpus/tools/claude_code.json`): normalizing twice
//! equals normalizing once; a valid call is unchanged (to the byte, no
//! repair); the streaming normalizer's output equals the one-shot result at
//! every chunking, and its argument deltas add up to the final arguments —
//! also for arguments given as a JSON string, wrapped, or as a JSON string
//! inside nested wrappers.

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolstream::normalize::{read_tools, Catalog, Normalizer, Outcome};
use toolstream::{Event, Span, ToolCall, Tools};

fn tools() -> &'static (Tools, Arc<Catalog>) {
    static T: OnceLock<(Tools, Arc<Catalog>)> = OnceLock::new();
    T.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/corpus/tools/claude_code.json"
        ))
        .expect("corpus/tools/claude_code.json");
        let tools = read_tools(&text).expect("tools").0;
        let cat = Arc::new(Catalog::new(&tools));
        (tools, cat)
    })
}

/// A small deterministic generator (the proptest input is its seed).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

const WORDS: &[&str] = &[
    "ls -la",
    "/tmp/a.txt",
    "Paris",
    "é\"\\ \n",
    "",
    "42",
    "true",
    "in_progress",
    "x",
];

/// A value that conforms to `schema` (`valid`) or is likely one a small
/// model would write instead (numbers as strings, a single item for an
/// array, `null`, a wrong case).
fn value(schema: &Value, g: &mut Gen, valid: bool, depth: usize) -> Value {
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        _ => {
            if let Some(Value::Array(any)) = schema.get("anyOf") {
                let m = &any[g.below(any.len() as u64) as usize];
                return value(m, g, valid, depth);
            }
            "string"
        }
    };
    if let Some(Value::Array(e)) = schema.get("enum") {
        let pick = e[g.below(e.len() as u64) as usize].clone();
        return match (valid, &pick) {
            (false, Value::String(s)) if g.chance(50) => Value::String(s.to_uppercase()),
            _ => pick,
        };
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    let wrong = !valid && g.chance(40);
    match ty {
        "string" if wrong => match g.below(3) {
            0 => json!(g.below(1000)),
            1 => json!(true),
            _ => Value::Null,
        },
        "string" => {
            if schema.get("format").and_then(Value::as_str) == Some("uri") {
                return json!("https://example.com/a");
            }
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let mut s = WORDS[g.below(WORDS.len() as u64) as usize].to_owned();
            while s.chars().count() < min {
                s.push('x');
            }
            Value::String(s)
        }
        "integer" if wrong => {
            if g.chance(50) {
                json!(g.below(100).to_string())
            } else {
                json!(g.below(100) as f64 + 0.0)
            }
        }
        "integer" => json!(g.below(1000) + 1),
        "number" if wrong => json!(format!("{}.5", g.below(100))),
        "number" => json!(g.below(1000) as f64 / 4.0),
        "boolean" if wrong => json!(if g.chance(50) { "true" } else { "false" }),
        "boolean" => json!(g.chance(50)),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            if wrong && depth < 3 {
                return value(&items, g, true, depth + 1);
            }
            let n = g.below(3);
            Value::Array((0..n).map(|_| value(&items, g, valid, depth + 1)).collect())
        }
        "object" if depth < 3 => object(schema, g, valid, depth + 1),
        _ => json!({}),
    }
}

fn object(schema: &Value, g: &mut Gen, valid: bool, depth: usize) -> Value {
    let mut m = Map::new();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (k, ps) in props {
            if !required.contains(&k.as_str())
                && (g.chance(50) || (valid && ps.get("pattern").is_some()))
            {
                // (A pattern is not generated: such a parameter is left out of valid calls.)
                continue;
            }
            let key = if !valid && g.chance(15) {
                k.to_uppercase()
            } else {
                k.clone()
            };
            m.insert(key, value(ps, g, valid, depth));
        }
    }
    if !valid && g.chance(15) {
        m.insert("extra_key".into(), json!(1));
    }
    Value::Object(m)
}

/// A call to one of the tools: its name and its arguments text.
fn call(seed: u64, valid: bool) -> (String, String) {
    let (tools, _) = tools();
    let mut g = Gen(seed | 1);
    let spec = &tools.specs()[g.below(tools.specs().len() as u64) as usize];
    let schema = spec.parameters.clone().unwrap_or(json!({}));
    let args = object(&schema, &mut g, valid, 0);
    let mut name = spec.name.clone();
    if !valid && g.chance(20) {
        name = name.to_lowercase();
    }
    let mut text = if g.chance(50) {
        serde_json::to_string_pretty(&args).unwrap()
    } else {
        serde_json::to_string(&args).unwrap()
    };
    if !valid {
        // Structural failures: the arguments as a JSON string, in a
        // wrapper, or as a JSON string in a wrapper in a wrapper.
        let string = |t: &str| serde_json::to_string(t).unwrap();
        match g.below(10) {
            0 => text = string(&text),
            1 => text = format!(r#"{{"arguments": {text}}}"#),
            2 => text = format!(r#"{{"arguments": {{"input": {}}}}}"#, string(&text)),
            _ => {}
        }
    }
    (name, text)
}

fn streamed(
    cat: &Arc<Catalog>,
    name: &str,
    args: &str,
    cuts: &[usize],
) -> (String, String, Outcome) {
    let mut n = Normalizer::new(cat.clone());
    let mut out = n.push(Event::ToolStart {
        index: 0,
        id: "c".into(),
        name: name.into(),
        span: Span::default(),
    });
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (args.len() + 1)).collect();
    points.push(0);
    points.push(args.len());
    points.sort_unstable();
    points.dedup();
    for w in points.windows(2) {
        out.extend(n.push(Event::ToolArgs {
            index: 0,
            delta: args.as_bytes()[w[0]..w[1]].into(),
            span: Span::default(),
        }));
    }
    out.extend(n.push(Event::ToolEnd {
        call: Box::new(ToolCall {
            index: 0,
            id: "c".into(),
            name: name.into(),
            arguments: args.into(),
            repairs: vec![],
            truncated: false,
        }),
        span: Span::default(),
    }));
    out.extend(n.finish());
    let mut deltas = Vec::new();
    let mut end = None;
    for e in out {
        match e.event {
            Event::ToolArgs { delta, .. } => deltas.extend_from_slice(&delta),
            Event::ToolEnd { call, .. } => {
                let report = *e.report.expect("a report on every ToolEnd");
                end = Some(Outcome {
                    name: call.name.to_string(),
                    arguments: call.arguments.clone(),
                    report,
                });
            }
            _ => {}
        }
    }
    let end = end.expect("a ToolEnd");
    (
        String::from_utf8(deltas).expect("UTF-8 deltas"),
        end.arguments.clone(),
        end,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn normalizing_twice_equals_once(seed in any::<u64>()) {
        let (_, cat) = tools();
        let (name, args) = call(seed, false);
        let once = cat.normalize(&name, &args);
        let twice = cat.normalize(&once.name, &once.arguments);
        prop_assert_eq!(&twice.arguments, &once.arguments);
        prop_assert_eq!(&twice.name, &once.name);
        prop_assert!(twice.report.fixes.is_empty(), "{:?}", twice.report.fixes);
        prop_assert_eq!(&twice.report.errors, &once.report.errors);
    }

    #[test]
    fn a_valid_call_is_unchanged(seed in any::<u64>()) {
        let (_, cat) = tools();
        let (name, args) = call(seed, true);
        let o = cat.normalize(&name, &args);
        prop_assert!(o.report.is_ok(), "{} {} {:?}", name, args, o.report.errors);
        prop_assert!(o.report.fixes.is_empty(), "{:?}", o.report.fixes);
        prop_assert_eq!(o.arguments, args.trim());
    }

    #[test]
    fn streaming_equals_one_shot_and_deltas_add_up(
        seed in any::<u64>(),
        valid in any::<bool>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let (_, cat) = tools();
        let (name, args) = call(seed, valid);
        let one = cat.normalize(&name, &args);
        let (deltas, final_args, streamed) = streamed(cat, &name, &args, &cuts);
        prop_assert_eq!(&deltas, &final_args);
        prop_assert_eq!(&streamed.arguments, &one.arguments);
        prop_assert_eq!(&streamed.name, &one.name);
        prop_assert_eq!(&streamed.report, &one.report);
    }

    #[test]
    fn every_byte_split_gives_the_same_result(seed in any::<u64>()) {
        let (_, cat) = tools();
        let (name, args) = call(seed, false);
        let one = cat.normalize(&name, &args);
        let cuts: Vec<usize> = (0..=args.len()).collect();
        let (deltas, final_args, streamed) = streamed(cat, &name, &args, &cuts);
        prop_assert_eq!(&deltas, &final_args);
        prop_assert_eq!(&streamed.arguments, &one.arguments);
        prop_assert_eq!(&streamed.report, &one.report);
    }
}
