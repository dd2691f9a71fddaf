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

/// Inputs beyond the catalogue: several dialects in one stream, repairs.
const EXTRA: &[&str] = &[
    "<think>plan</think>[TOOL_CALLS]a[ARGS]{\"x\": 1}\n[c(y='it''s', z=\"\"\"q\"\"\")]<|tool_call>call:d{z:<|\"|>w<|\"|>}<tool_call|>",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"é\": \"日本\"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>g<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "[f(a=1 b='x', c=[1, (2,), {3: 'y'}], d=g(h=[1]), e=r'\\d\\'', u='\\u00e9\\x41\\N{DASH}')]",
    "get_weather(city='Paris');\n**get_time(tz='CET')**\n[\"calc(n=5)\", 'area(r=2)']",
    "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>{\"a\": [1, {\"b\": \"<|call|>\"}]}<|call|><|start|>assistant<|channel|>final<|message|>done<|return|>",
    ">>>f\n{\"a\": 1}>>>all\ntext<function=g>{\"b\": 2}</function>",
];

fn inputs() -> Vec<&'static str> {
    EXAMPLES
        .iter()
        .map(|e| e.input)
        .chain(EXTRA.iter().copied())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_splits_agree(which in 0usize..1000, cuts in prop::collection::vec(0usize..10_000, 0..12)) {
        let all = inputs();
        let input = all[which % all.len()].as_bytes();
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
