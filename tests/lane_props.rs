//! Property: a call's arguments streamed in small chunks (where the parser's
//! lane reads them: plain JSON held across chunks, see `src/json/repair/lane.rs`)
//! give the calls, text and repairs of the whole input, under every split,
//! with the lane stopping and starting again at every repair, limit and
//! tag, in the dialects whose JSON the lane reads — and every contract holds.

mod common;

use common::{cases, check_contracts, run_chunked, run_split, splits_from, streamed_runs, summary};
use proptest::prelude::*;
use serde_json::Value;
use toolstream::{Config, Dialect, Limits};

/// Arbitrary JSON values: strings with escapes, non-ASCII, `<`, markup-like
/// text; numbers of every shape; nesting.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        "[a-z <>/é日\u{1F600}\"\\\\\n\t\u{7f}\u{1}]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z_\"é]{0,6}|[a-z]{10,30}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Fragments a model gets wrong (or that end the arguments), inserted into
/// valid JSON.
const NOISE: &[&[u8]] = &[
    b",",
    b",,",
    b"}",
    b"]",
    b"{",
    b"[",
    b":",
    b" ",
    b"\n",
    b"'",
    b"\"",
    b"\\",
    b"True",
    b"None",
    b"nul",
    b"007",
    b"1e999",
    b".5",
    b"+1",
    b"-",
    b"NaN",
    b"<",
    b"</tool_call>",
    b"<x>",
    b"\t",
    b"\x01",
    b"\xff",
    b"\xe2\x9c",
    b"\\ud83d",
    b"\\u00",
    b"'k': 'v'",
    b"// c\n",
    b"key: 1",
    b"\xe2\x80\x9cq\xe2\x80\x9d",
    // A lone low surrogate, UTF-8 that is overlong, a surrogate, past U+10FFFF.
    b"\\udc00",
    b"\\uDBFF\\uDFFF",
    b"\xc0\x80",
    b"\xe0\x80\x80",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xf0\x9f\x98\x80",
];

/// Valid arguments (compact or pretty), with up to four noise fragments
/// inserted at random places.
fn args() -> impl Strategy<Value = Vec<u8>> {
    (
        json(),
        any::<bool>(),
        prop::collection::vec((0usize..10_000, 0usize..NOISE.len()), 0..4),
    )
        .prop_map(|(v, pretty, noise)| {
            let v = match v {
                Value::Object(_) => v,
                other => serde_json::json!({ "v": other }),
            };
            let mut s = if pretty {
                serde_json::to_vec_pretty(&v)
            } else {
                serde_json::to_vec(&v)
            }
            .expect("serialise");
            for (at, which) in noise {
                let at = at % (s.len() + 1);
                s.splice(at..at, NOISE[which].iter().copied());
            }
            s
        })
}

/// How the calls are written: the dialects whose JSON the lane reads (call
/// envelopes, or the arguments alone after markup naming the tool).
const WRAPPERS: &[(&str, &str, &str)] = &[
    (
        "<tool_call>\n{\"name\": \"f\", \"arguments\": ",
        "}\n</tool_call>\n",
        "hermes",
    ),
    (
        "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": ",
        "}]",
        "mistral",
    ),
    (
        "```json\n{\"name\": \"f\", \"arguments\": ",
        "}\n```\n",
        "fenced",
    ),
    ("{\"name\": \"f\", \"arguments\": ", "}\n", "bare"),
    (
        "<|python_tag|>{\"name\": \"f\", \"parameters\": ",
        "}<|eom_id|>",
        "llama",
    ),
    (
        "<|tool_call_start|>[{\"name\": \"f\", \"arguments\": ",
        "}]<|tool_call_end|>",
        "lfm2",
    ),
    // The special-token dialects read the arguments alone.
    (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n",
        "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "deepseek",
    ),
    (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>",
        "<|tool_call_end|><|tool_calls_section_end|>",
        "kimi",
    ),
    ("[TOOL_CALLS]f[ARGS]", "", "mistral [ARGS]"),
    (
        "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>",
        "<|call|>",
        "harmony",
    ),
    ("<function=f>", "</function>", "functionary"),
    ("get_weather\n", "\n", "chatglm"),
];

/// The one dialect a wrapper is read by alone (as well as under auto-detection,
/// where `<function=` and a name line may go to other readers).
fn only(w: usize) -> Option<Dialect> {
    match WRAPPERS[w].2 {
        "functionary" => Some(Dialect::Functionary),
        "chatglm" => Some(Dialect::ChatGlm),
        _ => None,
    }
}

/// One or two calls around `args` (written as `WRAPPERS[w]`), prose before and after.
fn input(args: &[u8], two: bool, w: usize) -> Vec<u8> {
    let (open, close, _) = WRAPPERS[w % WRAPPERS.len()];
    let mut out = b"Let me call it.\n".to_vec();
    for _ in 0..1 + usize::from(two) {
        out.extend_from_slice(open.as_bytes());
        out.extend_from_slice(args);
        out.extend_from_slice(close.as_bytes());
    }
    out.extend_from_slice(b" Done.");
    out
}

fn configs() -> [Config; 3] {
    let tight = |max_depth, max_token_bytes, max_args_bytes| {
        Config::default().with_limits(Limits {
            max_depth,
            max_token_bytes,
            max_args_bytes,
            ..Limits::default()
        })
    };
    [Config::default(), tight(3, 16, 64), tight(5, 24, 4096)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn streamed_arguments_agree(args in args(), two in any::<bool>(), w in 0..WRAPPERS.len(), cuts in prop::collection::vec(0usize..10_000, 0..24)) {
        let input = input(&args, two, w);
        let splits = splits_from(&cuts, input.len());
        for cfg in configs().into_iter().chain(only(w).map(|d| Config::default().with_dialects(vec![d]))) {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let expect = summary(&whole);
            for (how, events) in streamed_runs(&input, &splits, &cfg) {
                check_contracts(&input, &events);
                prop_assert_eq!(summary(&events), expect.clone(), "{} {} splits {:?} of {:?}", WRAPPERS[w].2, how, splits, String::from_utf8_lossy(&input));
            }
        }
    }
}

/// The lane's steady state, deterministic: long plain arguments in every
/// chunk size from 1 to 16 bytes, with an invalid byte, a trailing comma and
/// a Python literal late in the arguments (the lane stops, the repairer
/// repairs, the lane starts again).
#[test]
fn long_arguments_in_every_chunk_size() {
    let mut args = String::from("{\"items\": [");
    for k in 0..60 {
        args.push_str(&format!(
            "{{\"id\": {k}, \"label\": \"item \\\"{k}\\\" é\\u00e9\", \"ok\": true, \"x\": -{k}.5e-3, \"n\": null}}, "
        ));
    }
    args.push_str("{\"bad\": True,}, \"caf\u{e9}\"], \"note\": \"x\"}");
    for (w, (_, _, name)) in WRAPPERS.iter().enumerate() {
        let input = input(args.as_bytes(), true, w);
        let cfg = only(w).map_or_else(Config::default, |d| {
            Config::default().with_dialects(vec![d])
        });
        let whole = run_split(&input, &[], &cfg);
        check_contracts(&input, &whole);
        let calls = common::calls(&whole);
        assert_eq!(calls.len(), 2, "{name}");
        assert!(calls[0].arguments.contains("\"bad\": true"), "{name}");
        for n in 1..=16 {
            let events = run_chunked(&input, n, &cfg);
            check_contracts(&input, &events);
            assert_eq!(summary(&events), summary(&whole), "{name}, {n}-byte chunks");
        }
    }
}

/// Long string values of prose, where the lane commits whole chunks at
/// once: commas and spaces at every place a chunk can end (held, then
/// content), non-ASCII characters cut by chunk ends, a string missing its
/// closing quote before `, "key":` late in the arguments, every chunk size
/// from 1 to 80 bytes (the whole-chunk test covers up to 64).
#[test]
fn long_prose_strings_in_every_chunk_size() {
    let line = "He said, “ship it”,  then ran — naïve café, 42 ÷ 7 ≈ 6 ✓,, ok ";
    let mut args = String::from("{\"text\": \"");
    for _ in 0..12 {
        args.push_str(line);
    }
    args.push_str("\", \"more\": \"");
    for _ in 0..6 {
        args.push_str(line);
    }
    args.push_str("end, , \"next\": 2, \"last\": \"tail ,\"}");
    let input = input(args.as_bytes(), false, 0);
    let cfg = Config::default().with_dialects(vec![Dialect::Hermes]);
    let whole = run_split(&input, &[], &cfg);
    check_contracts(&input, &whole);
    let calls = common::calls(&whole);
    assert_eq!(calls.len(), 1);
    let v: serde_json::Value = serde_json::from_str(&calls[0].arguments).expect("valid JSON");
    assert_eq!(v["next"], 2, "{}", calls[0].arguments);
    // The string before `, "next":` was closed before its last comma.
    assert!(
        v["more"].as_str().is_some_and(|s| s.ends_with("ok end, ")),
        "{}",
        calls[0].arguments
    );
    assert!(calls[0]
        .repairs
        .iter()
        .any(|r| r.kind == toolstream::RepairKind::MissingQuote));
    for n in 1..=80 {
        let events = run_chunked(&input, n, &cfg);
        check_contracts(&input, &events);
        assert_eq!(summary(&events), summary(&whole), "{n}-byte chunks");
    }
}
