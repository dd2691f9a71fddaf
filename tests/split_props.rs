//! Property: splitting any catalogue example (and a few harder inputs) at
//! random points — inside multi-byte special tokens, UTF-8 characters,
//! escapes, string delimiters — gives the same text, reasoning and calls as
//! the whole input, and every contract holds.

mod catalogue;
mod common;

use catalogue::EXAMPLES;
use common::{cases, check_contracts, run_split, summary};
use proptest::prelude::*;
use toolstream::{Config, Limits, Tools};

/// Inputs beyond the catalogue: several dialects in one stream, repairs,
/// broken calls followed by prose, invalid UTF-8.
const EXTRA: &[&str] = &[
    "[\n lookup(q='a'),\n find(id=x) for x in lookup(q='a')\n]\n\nBut this is prose.\n",
    "Sure:\n[get(city='Par\nis the capital', n=1)]\nand more text (with a paren",
    "get_weather(city=foo bar\nThe next line is prose, not an argument.",
    "<think>plan</think>[TOOL_CALLS]a[ARGS]{\"x\": 1}\n[c(y='it''s', z=\"\"\"q\"\"\")]<|tool_call>call:d{z:<|\"|>w<|\"|>}<tool_call|>",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"é\": \"日本\"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>g<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "[f(a=1 b='x', c=[1, (2,), {3: 'y'}], d=g(h=[1]), e=r'\\d\\'', u='\\u00e9\\x41\\N{DASH}')]",
    "get_weather(city='Paris');\n**get_time(tz='CET')**\n[\"calc(n=5)\", 'area(r=2)']",
    "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{\"a\": [1, {\"b\": \"<|call|>\"}]}<|call|><|start|>assistant<|channel|>final<|message|>done<|return|>",
    ">>>f\n{\"a\": 1}>>>all\ntext<function=g>{\"b\": 2}</function>",
];

/// Inputs that are not UTF-8.
const BYTES: &[&[u8]] = &[
    b"[f(s='a\xff\xfeb\xe2\x9c', t=x\xc3)]",
    b"<|python_tag|>print('\xff')\xe2\x9c\x93<|eom_id|>",
    b"<|tool_call>call:f{s:<|\"|>\xf0\x9f\x98<|\"|>}<tool_call|>",
];

fn inputs() -> Vec<&'static [u8]> {
    EXAMPLES
        .iter()
        .map(|e| e.input.as_bytes())
        .chain(EXTRA.iter().map(|s| s.as_bytes()))
        .chain(BYTES.iter().copied())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_splits_agree(which in 0usize..1000, cuts in prop::collection::vec(0usize..10_000, 0..12)) {
        let all = inputs();
        let input = all[which % all.len()];
        let cfg = Config::default();
        let whole = run_split(input, &[], &cfg);
        check_contracts(input, &whole);
        let mut splits: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        splits.sort_unstable();
        splits.dedup();
        let events = run_split(input, &splits, &cfg);
        check_contracts(input, &events);
        prop_assert_eq!(summary(&events), summary(&whole), "splits {:?} of {:?}", splits, String::from_utf8_lossy(input));
    }
}

/// Pieces of the inputs above, spliced: markup of one dialect cut short and
/// followed by another's, a closing token without its opening, a call whose
/// arguments run into a reasoning block. `(input, start, length)` each.
fn spliced() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((0usize..1000, 0usize..10_000, 0usize..80), 1..8).prop_map(|pieces| {
        let all = inputs();
        let mut out = Vec::new();
        for (which, start, len) in pieces {
            let input = all[which % all.len()];
            let start = start % (input.len() + 1);
            out.extend_from_slice(&input[start..(start + len).min(input.len())]);
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Spliced inputs: every contract, and the same result whole, at random
    /// splits and byte by byte, under auto-detection, under one dialect alone,
    /// under tight limits and with typed tools offered.
    #[test]
    fn spliced_pieces_agree(input in spliced(), cuts in prop::collection::vec(0usize..10_000, 0..12), which in 0usize..EXAMPLES.len()) {
        let mut splits: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        splits.sort_unstable();
        splits.dedup();
        let bytewise: Vec<usize> = (1..input.len()).collect();
        let tight = Config::default().with_limits(Limits {
            max_depth: 3,
            max_args_bytes: 24,
            max_held_bytes: 48,
            max_token_bytes: 12,
            max_tag_bytes: 32,
            max_repairs: 3,
            ..Limits::default()
        });
        // Offered tools reach the schema-typed paths (XML values typed by
        // the parameter's type, positional names, known-name matching).
        let tools = Tools::from_json(
            r#"[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}, "days": {"type": "integer"}}}},
                {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "integer"}}}},
                {"name": "f", "parameters": {"type": "object", "properties": {"data": {"type": "object"}, "flag": {"type": "boolean"}, "xs": {"type": "array"}}}}]"#,
        )
        .expect("tools");
        let typed = Config::default().with_tools(tools);
        for cfg in [Config::default(), Config::default().with_dialects(vec![EXAMPLES[which].dialect]), tight, typed] {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            for cuts in [&splits, &bytewise] {
                let events = run_split(&input, cuts, &cfg);
                check_contracts(&input, &events);
                prop_assert_eq!(summary(&events), summary(&whole), "splits {:?} of {:?} ({:?})", cuts, String::from_utf8_lossy(&input), EXAMPLES[which].dialect);
            }
        }
    }
}

/// A long string value (300 B to ~13 KB) of pieces that cost the writer
/// something: non-ASCII, escapes, raw control characters and an invalid
/// byte (repaired), plain runs.
fn long_content() -> impl Strategy<Value = Vec<u8>> {
    const PIECES: &[&[u8]] = &[
        b"plain ASCII words, ",
        "naïve café — ✓ 日本語 😀 ".as_bytes(),
        br#"\"quoted\" "#,
        br"C:\\tools\\x ",
        br"\n\t\u00e9\ud83d\ude00 ",
        b"raw\ttab and raw\nline ",
        b"bad \xff byte ",
        b", \"x\": 1 ",
    ];
    (
        prop::collection::vec(0usize..PIECES.len(), 1..64),
        20usize..600,
    )
        .prop_map(|(picks, reps)| {
            let mut out = Vec::new();
            while out.len() < 300 + reps * 20 {
                for &p in &picks {
                    out.extend_from_slice(PIECES[p]);
                }
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    /// A call whose arguments are long enough to be written as checked text
    /// (`ArgsWriter`'s `head`: writes of 256 B and more, buffers of 4 KB
    /// and more moved there) and short pieces around them: the same call
    /// whole, at random splits, in 64-byte chunks and byte by byte; its
    /// deltas add up to its arguments (`check_contracts`), and the
    /// arguments are the value written. As an object, as a JSON string of
    /// an object (the nested writer), in a fence, and under an arguments
    /// limit that cuts inside the long value.
    #[test]
    fn long_arguments_agree_at_every_split(content in long_content(), cuts in prop::collection::vec(0usize..100_000, 0..12), shape in 0usize..4) {
        let text = String::from_utf8_lossy(&content).into_owned();
        let mut input = b"Writing it.\n".to_vec();
        let mut cfg = Config::default();
        match shape {
            0 | 3 => {
                input.extend_from_slice(b"<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"/tmp/x\", \"content\": \"");
                input.extend_from_slice(&content);
                input.extend_from_slice(b"\"}}\n</tool_call>\nDone.");
                if shape == 3 {
                    cfg = cfg.with_limits(Limits { max_args_bytes: 2_000 + content.len() / 3, ..Limits::default() });
                }
            }
            1 => {
                // The arguments as a JSON string holding the object.
                let inner = serde_json::json!({"content": text}).to_string();
                let outer = serde_json::to_string(&inner).expect("json");
                input.extend_from_slice(b"<tool_call>\n{\"name\": \"write_file\", \"arguments\": ");
                input.extend_from_slice(outer.as_bytes());
                input.extend_from_slice(b"}\n</tool_call>\nDone.");
            }
            _ => {
                input.extend_from_slice(b"```json\n{\"name\": \"write_file\", \"arguments\": {\"content\": \"");
                input.extend_from_slice(&content);
                input.extend_from_slice(b"\"}}\n```\nDone.");
            }
        }
        let mut splits: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        splits.sort_unstable();
        splits.dedup();
        let by64: Vec<usize> = (64..input.len()).step_by(64).collect();
        let bytewise: Vec<usize> = (1..input.len()).collect();
        let whole = run_split(&input, &[], &cfg);
        check_contracts(&input, &whole);
        let calls = common::calls(&whole);
        prop_assert_eq!(calls.len(), 1);
        let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).expect("JSON arguments");
        let got = args["content"].as_str();
        if shape == 3 {
            let limit = 2_000 + content.len() / 3;
            // Cut at the limit, then closed (a string, a cut key's `: null`, braces).
            prop_assert!(calls[0].arguments.len() <= limit + 32, "{} > {} + 32", calls[0].arguments.len(), limit);
        } else if shape == 1 {
            prop_assert_eq!(got, Some(text.as_str()));
        } else if let Ok(want) = serde_json::from_str::<String>(&format!("\"{text}\"")) {
            // Valid JSON content: the value as written.
            prop_assert_eq!(got, Some(want.as_str()));
        }
        for cuts in [&splits, &by64, &bytewise] {
            let events = run_split(&input, cuts, &cfg);
            check_contracts(&input, &events);
            prop_assert_eq!(summary(&events), summary(&whole), "shape {} splits {:?}", shape, cuts);
        }
    }
}
