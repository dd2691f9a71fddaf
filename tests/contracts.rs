//! Property tests of the parser's contracts on generated inputs:
//! chunk invariance (random splits, 1-byte, inside UTF-8, tags and escapes),
//! lossless spans, deltas adding up to valid JSON-object arguments, and no
//! panic on arbitrary bytes.

mod common;

use common::{cases, check_contracts, run_split, run_split_bytes, summary};
use proptest::prelude::*;
use toolstream::{Config, Limits, Tools};

/// Pieces of model output, valid and broken, that reach most parser states.
const VOCAB: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_call>\n",
    "\n</tool_call>",
    "<tool_use>",
    "</tool_use>",
    "<tools>",
    "<function_call>",
    "{",
    "}",
    "[",
    "]",
    "\"name\"",
    "\"tool\"",
    ": ",
    ":",
    ", ",
    ",",
    "\"arguments\"",
    "\"parameters\"",
    "\"input\"",
    "\"get_weather\"",
    "\"city\"",
    "\"Paris\"",
    "'x'",
    "'it's'",
    "<think>",
    "</think>",
    "<thinking>",
    "```json\n",
    "```",
    "```\n",
    "\n",
    " ",
    "é",
    "日本",
    "✓",
    "True",
    "None",
    "null",
    "false",
    "12",
    "007",
    ".5",
    "-",
    "1e",
    "\\",
    "\\\"",
    "\\u00e9",
    "\\ud83d",
    "\\ude00",
    "\\n",
    "text ",
    "Let me check. ",
    "\"say \"hi\" now\"",
    "//c\n",
    "/*c*/",
    "#",
    "\"a\"",
    "\"b\"",
    "NaN",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
    "{\"arguments\": {\"a\": [1, 2]}, \"name\": \"g\"}",
    "[{\"name\": \"h\", \"arguments\": {}}]",
    "{\"arguments\": {\"city\": \"Paris\"}}",
    "\"type\"",
    "\"object\"",
    "\"properties\"",
    "{\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}}}",
    "\"{\\\"k\\\": 2}\"",
    "...",
    "\u{2026}",
    "{\"name\": \"first_tool\", \"arguments\": {...}}",
    "{\"name\": \"f\", \"arguments\": \"<args>\"}",
    "\"ls -l\"",
    "{{",
    "}}",
    "\u{feff}",
    "\u{a0}",
    "“",
    "”",
    "<",
    ">",
    "`",
    "\t",
];

fn fragments() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(VOCAB), 0..40).prop_map(|v| v.concat().into_bytes())
}

fn splits(len: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::btree_set(0..=len.max(1), 0..12).prop_map(|s| s.into_iter().collect())
}

fn same(
    input: &[u8],
    a: &[toolstream::Event],
    b: &[toolstream::Event],
) -> Result<(), TestCaseError> {
    let (sa, sb) = (summary(a), summary(b));
    prop_assert_eq!(
        &sa.0,
        &sb.0,
        "text differs for {:?}",
        String::from_utf8_lossy(input)
    );
    prop_assert_eq!(
        &sa.1,
        &sb.1,
        "thinking differs for {:?}",
        String::from_utf8_lossy(input)
    );
    prop_assert_eq!(
        &sa.2,
        &sb.2,
        "calls differ for {:?}",
        String::from_utf8_lossy(input)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn chunk_invariance_on_model_like_output((input, cuts) in fragments().prop_flat_map(|i| { let n = i.len(); (Just(i), splits(n)) })) {
        let cfg = Config::default();
        let whole = run_split(&input, &[], &cfg);
        check_contracts(&input, &whole);
        let split = run_split(&input, &cuts, &cfg);
        check_contracts(&input, &split);
        same(&input, &whole, &split)?;
        // The shared-chunk API gives the very same events.
        prop_assert_eq!(&run_split_bytes(&input, &cuts, &cfg), &split, "feed_bytes differs for {:?}", String::from_utf8_lossy(&input));
        let bytewise: Vec<usize> = (1..input.len()).collect();
        let ones = run_split(&input, &bytewise, &cfg);
        check_contracts(&input, &ones);
        same(&input, &whole, &ones)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..300), cuts in splits(300)) {
        let cfg = Config::default();
        let whole = run_split(&input, &[], &cfg);
        check_contracts(&input, &whole);
        let split = run_split(&input, &cuts, &cfg);
        check_contracts(&input, &split);
        same(&input, &whole, &split)?;
    }

    #[test]
    fn tight_limits_keep_the_contracts((input, cuts) in fragments().prop_flat_map(|i| { let n = i.len(); (Just(i), splits(n)) })) {
        let cfg = tight_limits();
        let whole = run_split(&input, &[], &cfg);
        check_contracts(&input, &whole);
        let split = run_split(&input, &cuts, &cfg);
        check_contracts(&input, &split);
        same(&input, &whole, &split)?;
    }

    /// With tools offered, names are matched and inferred from schemas
    /// (a call with arguments and no name): the same calls for any split,
    /// with the default limits and with tight ones.
    #[test]
    fn offered_tools_keep_the_contracts((input, cuts) in fragments().prop_flat_map(|i| { let n = i.len(); (Just(i), splits(n)) })) {
        let tools = Tools::from_json(
            r#"[{"name": "get_weather", "parameters": {"properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}},
                {"name": "f", "parameters": {"properties": {"a": {"type": "integer"}}}}]"#,
        )
        .expect("tools");
        let tight = tight_limits().with_tools(tools.clone());
        for cfg in [Config::default().with_tools(tools), tight] {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let split = run_split(&input, &cuts, &cfg);
            check_contracts(&input, &split);
            same(&input, &whole, &split)?;
        }
    }

    #[test]
    fn prefill_and_dialect_choices((input, cuts) in fragments().prop_flat_map(|i| { let n = i.len(); (Just(i), splits(n)) })) {
        for cfg in [
            Config::default().with_prefill("<think>\n"),
            Config::default().with_dialects(vec![toolstream::Dialect::Hermes]),
            Config::default().with_dialects(vec![toolstream::Dialect::Json]),
        ] {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let split = run_split(&input, &cuts, &cfg);
            check_contracts(&input, &split);
            same(&input, &whole, &split)?;
        }
    }
}

/// The limits of `tight_limits_keep_the_contracts`.
fn tight_limits() -> Config {
    Config::default().with_limits(Limits {
        max_depth: 3,
        max_args_bytes: 40,
        max_held_bytes: 64,
        max_token_bytes: 16,
        max_tag_bytes: 32,
        max_repairs: 4,
        ..Limits::default()
    })
}

/// Found by a long run of `tight_limits_keep_the_contracts` (1M cases): a
/// key cut by the token limit after the first half of a lone surrogate's
/// escape (`\\` then `\\ud83d`) escaped its own closing quote.
#[test]
fn tight_limits_regression_long_key_with_raw_quotes() {
    agree_under_tight_limits(
        "<tool_call>\u{e9}{\"input\"```\\ud83d\"say \"hi\" now\"".as_bytes(),
        &[],
    );
}

/// Found by a long run of `tight_limits_keep_the_contracts` (1M cases): the
/// argument-size cut fell between a backslash and the quote it escapes; the
/// final arguments dropped the backslash the deltas had already carried.
#[test]
fn tight_limits_regression_cut_inside_an_escape() {
    agree_under_tight_limits(
        b"{{\"name\"\n<think>{, \"arguments\"\n</tool_call>\"name\"<\"name\"\"name\"",
        &[],
    );
}

/// Found by a long run of `tight_limits_keep_the_contracts` (1M cases) on
/// `c3a8db6`, split at byte 179: the repairs differed whole vs split (that
/// commit cut a bare key again with each later piece of it; `limits_3`).
#[test]
fn tight_limits_regression_split_179() {
    let input = b"{{{\"arguments\": {\"a\": [1, 2]}, \"name\": \"g\"}{\"arguments\": {\"a\": [1, 2]}, \"name\": \"g\"}<think>\"get_weather\"'x'}\"arguments\"]\"parameters\": None\xe2\x9c\x93\\</tool_use>-//c\n\t\\Let me check. \xe6\x97\xa5\xe6\x9c\xacLet me check. //c\n```\n```\"b\"'it's'<tool_use>";
    agree_under_tight_limits(input, &[179]);
}

/// Under [`tight_limits`], `input` keeps the contracts whole, cut at each
/// single byte, byte by byte and at `cuts`, and every split agrees with the
/// whole input.
fn agree_under_tight_limits(input: &[u8], cuts: &[usize]) {
    let cfg = tight_limits();
    let whole = run_split(input, &[], &cfg);
    check_contracts(input, &whole);
    let splits = (1..input.len())
        .map(|n| vec![n])
        .chain([(1..input.len()).collect(), cuts.to_vec()]);
    for split in splits {
        let events = run_split(input, &split, &cfg);
        check_contracts(input, &events);
        assert_eq!(summary(&events), summary(&whole), "split at {split:?}");
    }
}
