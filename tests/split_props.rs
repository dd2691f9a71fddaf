//! Property: splitting any catalogue example (and a few harder inputs) at
//! random points — inside multi-byte special tokens, UTF-8 characters,
//! escapes, string delimiters — gives the same text, reasoning and calls as
//! the whole input, and every contract holds.

mod catalogue;
mod common;

use catalogue::EXAMPLES;
use common::{check_contracts, run_split, summary};
use proptest::prelude::*;
use toolstream::Config;

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
