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
