//! Property: splitting a catalogue example at random points (inside the
//! three bytes of a full-width `｜` too) gives the same text, reasoning and
//! calls as feeding it whole, and every contract holds.

use crate::common::{check_contracts, run_split, summary};
use crate::util::{auto, weather_tools};
use proptest::prelude::*;
use toolstream::Config;

/// (name, input, tools known?) — one catalogue example per dialect, plus
/// parallel, truncated and delimiter-in-value variants.
const EXAMPLES: &[(&str, &str, bool)] = &[
    ("qwen3_coder", "<tool_call>\n<function=get_weather>\n<parameter=location>\nHangzhou\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>", false),
    ("qwen3_coder_bare", "Sure.\n<function=get_weather>\n<parameter=location>\nSF\n</parameter>\n</function>\nok", false),
    ("qwen3_coder_delims", "<tool_call>\n<function=write_file>\n<parameter=content>\ns = \"</parameter>\" < x && y\n<![CDATA[</function>]]>\n</parameter>\n</function>\n</tool_call>", true),
    ("qwen3_coder_bare_missing_param_close", "<function=get_weather>\n<parameter=location>\nSF\n</function>\nIt is sunny </function> there.", false),
    ("qwen3_coder_truncated", "<tool_call>\n<function=get_weather>\n<parameter=location>\nHang", false),
    ("seed_oss", "<seed:think>hmm</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>", false),
    ("xml_emulation", "<tool_call><name>get_weather</name><arguments><city>Paris</city><days>3</days></arguments></tool_call>", false),
    ("glm45", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>", false),
    ("glm47", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call><tool_call>get_time</tool_call>", false),
    ("minimax", "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls -la</parameter>\n</invoke>\n<invoke name=\"get_weather\">\n<parameter name=\"days\">2</parameter>\n</invoke>\n</minimax:tool_call>", true),
    ("dsml_v32", "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>", false),
    ("dsml_v4", "<｜DSML｜tool_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"q\" string=\"true\">日本</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>", false),
    ("step3", "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>", false),
    ("morph_xml", "<get_weather>\n  <city>Paris</city>\n  <days>3</days>\n</get_weather>", true),
    ("mixed", "Text <b>bold</b> <tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call> and <function=b>\n<parameter=x>\n1\n</parameter>\n</function>", false),
];

fn cfg_for(tools: bool) -> Config {
    if tools {
        weather_tools()
    } else {
        auto()
    }
}

fn example() -> impl Strategy<Value = (usize, Vec<usize>)> {
    (0..EXAMPLES.len()).prop_flat_map(|e| {
        let len = EXAMPLES[e].1.len();
        (Just(e), prop::collection::vec(1..len, 0..12))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_splits_agree((e, mut splits) in example()) {
        let (name, input, tools) = EXAMPLES[e];
        let cfg = cfg_for(tools);
        splits.sort_unstable();
        splits.dedup();
        let whole = run_split(input.as_bytes(), &[], &cfg);
        let split = run_split(input.as_bytes(), &splits, &cfg);
        check_contracts(input.as_bytes(), &split);
        prop_assert_eq!(summary(&split), summary(&whole), "{} split at {:?}", name, splits);
    }
}

#[test]
fn every_example_yields_its_calls() {
    for (name, input, tools) in EXAMPLES {
        let p = crate::common::check_all(input.as_bytes(), &cfg_for(*tools));
        assert!(!p.calls.is_empty(), "{name}");
    }
}

/// Fragments of every XML dialect's markup, values and prose.
const FRAGMENTS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "<function=g h>",
    "</function>",
    "<parameter=a>",
    "<parameter=b>",
    "</parameter>",
    "<parameter=\"c d\">",
    "\n",
    "\r\n",
    " ",
    "x",
    "42",
    "-1.5",
    "true",
    "[1, 2]",
    "{\"k\": 1}",
    "{'k': True,",
    "\"q\"",
    "a < b",
    "<b>",
    "&lt;",
    "&amp",
    "<![CDATA[",
    "]]>",
    "é",
    "日本",
    "｜",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "<invoke name=\"f\">",
    "</invoke>",
    "<parameter name=\"k\">",
    "<parameter name=\"k\" string=\"false\">",
    "<｜DSML｜function_calls>",
    "</｜DSML｜function_calls>",
    "<｜DSML｜invoke name=\"f\">",
    "</｜DSML｜invoke>",
    "<｜DSML｜parameter name=\"k\" string=\"true\">",
    "</｜DSML｜parameter>",
    "<｜tool_calls_begin｜>",
    "<｜tool_call_begin｜>",
    "function",
    "<｜tool_sep｜>",
    "<steptml:invoke name=\"f\">",
    "<steptml:parameter name=\"k\">",
    "</steptml:parameter>",
    "</steptml:invoke>",
    "<｜tool_call_end｜>",
    "<｜tool_calls_end｜>",
    "get_weather",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<name>",
    "</name>",
    "<arguments>",
    "</arguments>",
    "<city>",
    "</city>",
    "<get_weather>",
    "</get_weather>",
    "<think>",
    "</think>",
    "{\"name\": \"f\", \"arguments\": {}}",
    "```json\n",
    "```",
    "<",
    ">",
    "/",
    "=",
];

fn soup() -> impl Strategy<Value = (String, Vec<usize>)> {
    prop::collection::vec(0..FRAGMENTS.len(), 1..40).prop_flat_map(|ix| {
        let s: String = ix.iter().map(|&i| FRAGMENTS[i]).collect();
        let len = s.len().max(2);
        (Just(s), prop::collection::vec(1..len, 0..10))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn markup_soup_is_chunk_invariant((input, mut splits) in soup(), tools in any::<bool>(), decode in any::<bool>()) {
        let cfg = cfg_for(tools).with_decode_entities(decode);
        splits.sort_unstable();
        splits.dedup();
        let whole = run_split(input.as_bytes(), &[], &cfg);
        check_contracts(input.as_bytes(), &whole);
        let split = run_split(input.as_bytes(), &splits, &cfg);
        check_contracts(input.as_bytes(), &split);
        prop_assert_eq!(summary(&split), summary(&whole), "{:?} split at {:?}", input, splits);
        let bytes = crate::common::run_chunked(input.as_bytes(), 1, &cfg);
        check_contracts(input.as_bytes(), &bytes);
        prop_assert_eq!(summary(&bytes), summary(&whole), "{:?} byte by byte", input);
    }
}
