//! Property: string arguments streamed in small chunks — where a block takes
//! a chunk of plain string content whole (`Block::plain_chunk`: pythonic
//! calls, XML parameter values) instead of reading it byte by byte — give
//! the calls, text and repairs of the whole input under every split,
//! whatever the string holds (quotes of either kind, backslashes,
//! parentheses, line breaks, blanks, references, CDATA, tags, non-ASCII,
//! DEL) and whatever kind of string or value it is (single, double,
//! triple-quoted, raw, a dict key, inside a list; typed by a schema or not;
//! each XML dialect's whitespace rule), with tight limits and reference
//! decoding too — and every contract holds.

mod common;

use common::{cases, check_contracts, run_chunked, run_split, splits_from, streamed_runs, summary};
use proptest::prelude::*;
use toolstream::{Config, Dialect, Limits, Tools};

/// String content: mostly plain runs (the fast path's chunks), with the
/// bytes that stop it mixed in.
fn content() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            6 => "[a-z ]{1,24}",
            1 => prop::sample::select(vec![
                "'", "\"", "\\", "\\'", "\\n", "(", ")", "\n", "é", "日", "\u{1F600}", "\u{7f}",
                "\t", "{", "}", "[", "]", ",", "=", "#", "''", ")]", "<", "</tool_call>",
            ])
            .prop_map(str::to_owned),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// One argument value: a string of some kind around `content`, or a list or
/// dict holding such strings.
fn value() -> impl Strategy<Value = String> {
    (content(), 0..8usize).prop_map(|(c, kind)| match kind {
        0 => format!("'{c}'"),
        1 => format!("\"{c}\""),
        2 => format!("'''{c}'''"),
        3 => format!("r'{c}'"),
        4 => format!("['{c}', 'x']"),
        5 => format!("{{'{c}': 1, 'k': '{c}'}}"),
        6 => format!("f'{c}'"),
        _ => format!("'{c}"),
    })
}

/// One or two pythonic calls, prose around them, in a list or bare — or
/// Gemma 4 calls, whose strings are delimited by `<|"|>`.
fn input() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((value(), value()), 1..3),
        0..4usize,
        content(),
    )
        .prop_map(|(calls, form, raw)| {
            if form == 2 {
                let call = format!(
                    "<|tool_call>call:write_file{{path:<|\"|>/tmp/x<|\"|>,content:<|\"|>{raw}}}]<|\"|>,n:3}}<tool_call|>"
                );
                return format!("Sure.\n{call}{call}\nDone.").into_bytes();
            }
            if form == 3 {
                // The closing delimiter is missing: the closers the string
                // held back were the call's.
                let call = format!(
                    "<|tool_call>call:write_file{{content:<|\"|>{raw} text}}<tool_call|>"
                );
                return format!("Sure.\n{call}\nDone.").into_bytes();
            }
            let calls: Vec<String> = calls
                .iter()
                .map(|(a, b)| format!("write_file(path={a}, content={b}, n=3)"))
                .collect();
            let body = if form == 1 {
                format!("[{}]", calls.join(", "))
            } else {
                calls.join("\n")
            };
            format!("Sure, saving it.\n{body}\nDone.").into_bytes()
        })
}

fn configs() -> [Config; 2] {
    let tight = Config::default().with_limits(Limits {
        max_token_bytes: 16,
        max_args_bytes: 96,
        ..Limits::default()
    });
    [Config::default(), tight]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn streamed_strings_agree(input in input(), cuts in prop::collection::vec(0usize..10_000, 0..24)) {
        let splits = splits_from(&cuts, input.len());
        for cfg in configs() {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let expect = summary(&whole);
            for (how, events) in streamed_runs(&input, &splits, &cfg) {
                check_contracts(&input, &events);
                prop_assert_eq!(summary(&events), expect.clone(), "{} splits {:?} of {:?}", how, splits, String::from_utf8_lossy(&input));
            }
        }
    }
}

/// The steady state, deterministic: a long string argument of plain text in
/// every chunk size from 1 to 16 bytes, with the bytes that stop the fast
/// path late in it, under the default limits and an arguments limit that
/// falls inside the plain text.
#[test]
fn long_strings_in_every_chunk_size() {
    let plain = "the quick brown fox jumps over the lazy dog, 42 times; ".repeat(40);
    let input = format!(
        "Saving.\n[write_file(path='/tmp/a.txt', content='{plain}it\\'s \"quoted\" (x) caf\u{e9}\\n{plain}', n=3), note(text=\"{plain}\")]"
    );
    let limited = Config::default().with_limits(Limits {
        max_args_bytes: 1500,
        ..Limits::default()
    });
    let gemma = format!(
        "<|tool_call>call:write_file{{path:<|\"|>/tmp/a.txt<|\"|>,content:<|\"|>{plain}it's \"quoted\" {{x}} caf\u{e9}\n{plain}<|\"|>,n:3}}<tool_call|>"
    );
    for input in [&input, &gemma] {
        for cfg in [Config::default(), limited.clone()] {
            let whole = run_split(input.as_bytes(), &[], &cfg);
            check_contracts(input.as_bytes(), &whole);
            assert!(!common::calls(&whole).is_empty());
            for n in 1..=16 {
                let events = run_chunked(input.as_bytes(), n, &cfg);
                check_contracts(input.as_bytes(), &events);
                assert_eq!(summary(&events), summary(&whole), "{n}-byte chunks");
            }
        }
    }
    for cfg in [Config::default(), limited] {
        let whole = run_split(input.as_bytes(), &[], &cfg);
        check_contracts(input.as_bytes(), &whole);
        let calls = common::calls(&whole);
        assert_eq!(calls.len(), 2);
        for n in 1..=16 {
            let events = run_chunked(input.as_bytes(), n, &cfg);
            check_contracts(input.as_bytes(), &events);
            assert_eq!(summary(&events), summary(&whole), "{n}-byte chunks");
        }
    }
    let calls = common::calls(&run_split(input.as_bytes(), &[], &Config::default()));
    let content = calls[0].arguments_value().unwrap()["content"].clone();
    assert_eq!(
        content.as_str().unwrap(),
        format!("{plain}it's \"quoted\" (x) caf\u{e9}\n{plain}")
    );
}

/// XML parameter content: plain runs, and what a value must read itself.
fn xml_content() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            6 => "[a-z ]{1,24}",
            1 => prop::sample::select(vec![
                "<", "&", "&amp;", "&lt;", "&#233;", "\n", "\r\n", "\r", " ", "  ", "\t", "\"",
                "\\", "é", "日", "\u{1F600}", "\u{7f}", "]]>", "<![CDATA[a<b]]>", "</parameter>",
                "</arg_value>", "</x>", "{", "[1, 2]", "12", "true", "\n\n",
            ])
            .prop_map(str::to_owned),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// One or two calls of an XML dialect (qwen3_coder: one newline dropped at
/// each end; xml emulation and MiniMax: blanks trimmed; GLM: exact), each
/// with a string, an integer and an untyped parameter.
fn xml_input() -> impl Strategy<Value = (Vec<u8>, usize)> {
    (
        prop::collection::vec((xml_content(), xml_content(), xml_content()), 1..3),
        0..4usize,
    )
        .prop_map(|(calls, d)| {
            let mut out = String::from("Sure.\n");
            for (a, b, c) in calls {
                out.push_str(&match d {
                    0 => format!("<tool_call>\n<function=write_file>\n<parameter=content>\n{a}\n</parameter>\n<parameter=n>\n{b}\n</parameter>\n<parameter=note>\n{c}\n</parameter>\n</function>\n</tool_call>"),
                    1 => format!("<tool_call><name>write_file</name><arguments><content> {a} </content><n>{b}</n><note>{c}</note></arguments></tool_call>"),
                    2 => format!("<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"content\">{a}</parameter>\n<parameter name=\"n\">{b}</parameter>\n<parameter name=\"note\">{c}</parameter>\n</invoke>\n</minimax:tool_call>"),
                    _ => format!("<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>{a}</arg_value>\n<arg_key>n</arg_key>\n<arg_value>{b}</arg_value>\n<arg_key>note</arg_key>\n<arg_value>{c}</arg_value>\n</tool_call>"),
                });
            }
            out.push_str("\nDone.");
            (out.into_bytes(), d)
        })
}

fn xml_configs(d: usize) -> Vec<Config> {
    let tools = Tools::from_json(
        r#"[{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {"content": {"type": "string"}, "n": {"type": "integer"}}}}}]"#,
    )
    .unwrap();
    let dialect = [
        Dialect::Qwen3Coder,
        Dialect::XmlEmulation,
        Dialect::MiniMaxM2,
        Dialect::Glm,
    ][d];
    let mut decoding = Config::default().with_tools(tools.clone());
    decoding.decode_entities = true;
    vec![
        Config::default(),
        Config::default().with_tools(tools.clone()),
        decoding,
        Config::default()
            .with_dialects(vec![dialect])
            .with_limits(Limits {
                max_token_bytes: 16,
                max_args_bytes: 96,
                ..Limits::default()
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn streamed_xml_values_agree((input, d) in xml_input(), cuts in prop::collection::vec(0usize..10_000, 0..24)) {
        let splits = splits_from(&cuts, input.len());
        for cfg in xml_configs(d) {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let expect = summary(&whole);
            for (how, events) in streamed_runs(&input, &splits, &cfg) {
                check_contracts(&input, &events);
                prop_assert_eq!(summary(&events), expect.clone(), "{} splits {:?} of {:?}", how, splits, String::from_utf8_lossy(&input));
            }
        }
    }
}

/// A long parameter value of lines of text in every chunk size from 1 to
/// 16 bytes, each XML dialect's whitespace rule, with and without an
/// arguments limit inside the value.
#[test]
fn long_xml_values_in_every_chunk_size() {
    let text = "the \"quick\" brown fox\tjumps over the lazy dog, 42 times; café\n".repeat(40);
    let limited = Config::default().with_limits(Limits {
        max_args_bytes: 1500,
        ..Limits::default()
    });
    for d in 0..4 {
        let (a, b, c) = (format!("\n{text}  "), "7".to_owned(), "ok".to_owned());
        let input = match d {
            0 => format!("<tool_call>\n<function=write_file>\n<parameter=content>\n{a}\n</parameter>\n<parameter=n>\n{b}\n</parameter>\n</function>\n</tool_call>"),
            1 => format!("<tool_call><name>write_file</name><arguments><content>{a}</content><n>{b}</n></arguments></tool_call>"),
            2 => format!("<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"content\">{a}</parameter>\n<parameter name=\"note\">{c}</parameter>\n</invoke>\n</minimax:tool_call>"),
            _ => format!("<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>{a}</arg_value>\n</tool_call>"),
        };
        for cfg in [Config::default(), limited.clone()] {
            let whole = run_split(input.as_bytes(), &[], &cfg);
            check_contracts(input.as_bytes(), &whole);
            assert_eq!(common::calls(&whole).len(), 1, "dialect {d}");
            for n in 1..=16 {
                let events = run_chunked(input.as_bytes(), n, &cfg);
                check_contracts(input.as_bytes(), &events);
                assert_eq!(
                    summary(&events),
                    summary(&whole),
                    "dialect {d}, {n}-byte chunks"
                );
            }
        }
        let calls = common::calls(&run_split(input.as_bytes(), &[], &Config::default()));
        let content = calls[0].arguments_value().unwrap()["content"].clone();
        assert!(
            content
                .as_str()
                .unwrap()
                .contains("the \"quick\" brown fox\tjumps"),
            "dialect {d}"
        );
    }
}
