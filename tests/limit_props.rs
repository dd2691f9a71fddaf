//! Property: with a small [`Limits::max_args_bytes`], a call whose
//! arguments exceed it is cut at the same place (same arguments, same
//! repairs) however the input is split, in every dialect family: pythonic,
//! Gemma 4, FunctionGemma, JSON and XML. Every contract holds at every
//! split, and the cut arguments are valid JSON no longer than the limit
//! (plus the closers that complete them).

mod common;

use common::{check_contracts, run_split, summary};
use proptest::prelude::*;
use toolstream::{Config, Dialect, Limits, RepairKind};

const LIMIT: usize = 64;

/// (dialect, input): arguments well past 64 bytes, with strings holding
/// escapes, quotes and multi-byte characters at various places, numbers,
/// nested structures, and text after the call.
const INPUTS: &[(Dialect, &str)] = &[
    (Dialect::Pythonic, "[get_weather(city='Paris, \"the\" city of light é日本', days=12345678, opts={'a': [1, 2.5, True, None], 'b': 'x\\ny'}, tail='zzzzzzzzzzzzzzzzzzzzzz')]\nAfter."),
    (Dialect::Pythonic, "[f(a=1111111111, b=2222222222, c=3333333333, d=4444444444, e=5555555555, f=6666666666, g=7777777777)]"),
    (Dialect::Pythonic, "[f(s='\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x0b\\x0c\\x0e\\x0f\\x10\\x11\\x12\\x13'), g(n=1)]"),
    (Dialect::Gemma4, "<|tool_call>call:get_weather{location:<|\"|>Paris, \"the\" city é日本 of light and more<|\"|>,days:12345678,opts:{a:[1,2.5,true,null],b:<|\"|>x\ny<|\"|>}}<tool_call|>After."),
    (Dialect::Gemma4, "<|tool_call>call:f{a:1111111111,b:2222222222,c:3333333333,d:4444444444,e:5555555555,f:6666666666}<tool_call|>"),
    (Dialect::FunctionGemma, "<start_function_call>call:get_weather{city:<escape>Paris \\ \"quoted\" 日本語のテキスト and a long tail of text<escape>,n:42}<end_function_call>After."),
    (Dialect::FunctionGemma, "call:get_weather{city:<escape>Paris \"quoted\" 日本語のテキスト and a long tail of text here<escape>,n:42}\nAfter."),
    (Dialect::Json, "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris \\\"the\\\" city é日本 \\u00e9 of light\", \"days\": 12345678, \"opts\": {\"a\": [1, 2.5, true, null]}}}\nAfter."),
    (Dialect::Hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1111111111, \"b\": 2222222222, \"c\": 3333333333, \"d\": 4444444444, \"e\": 5555555555}}\n</tool_call>After."),
    (Dialect::Qwen3Coder, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis \"the\" city é日本 of light and more text\n</parameter>\n<parameter=days>\n12345678\n</parameter>\n</function>\n</tool_call>After."),
    (Dialect::MiniMaxM2, "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">echo \"日本語\" && ls -la /some/very/long/path/that/goes/on</parameter>\n</invoke>\n</minimax:tool_call>"),
];

fn cfg(d: Dialect, auto: bool) -> Config {
    let c = Config::default().with_limits(Limits {
        max_args_bytes: LIMIT,
        ..Limits::default()
    });
    if auto {
        c
    } else {
        c.with_dialects(vec![d])
    }
}

/// The whole input is cut, and sanely.
#[test]
fn every_input_is_cut() {
    for &(d, input) in INPUTS {
        for auto in [false, true] {
            let ev = run_split(input.as_bytes(), &[], &cfg(d, auto));
            check_contracts(input.as_bytes(), &ev);
            let (_, _, calls) = summary(&ev);
            let c = calls
                .iter()
                .find(|c| {
                    c.repairs
                        .iter()
                        .any(|r| r.kind == RepairKind::LimitExceeded)
                })
                .unwrap_or_else(|| panic!("{d} (auto {auto}): no call was cut: {calls:?}"));
            assert!(c.truncated, "{d}: a cut call is truncated");
            let v: serde_json::Value = serde_json::from_str(&c.arguments).unwrap();
            assert!(v.is_object());
            assert!(
                c.arguments.len() <= LIMIT + 16,
                "{d}: {} bytes: {}",
                c.arguments.len(),
                c.arguments
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn the_cut_does_not_depend_on_chunking(
        which in 0usize..1000,
        auto in any::<bool>(),
        cuts in prop::collection::vec(0usize..10_000, 0..24),
    ) {
        let (d, input) = INPUTS[which % INPUTS.len()];
        let input = input.as_bytes();
        let cfg = cfg(d, auto);
        let whole = run_split(input, &[], &cfg);
        let mut splits: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        splits.sort_unstable();
        splits.dedup();
        let events = run_split(input, &splits, &cfg);
        check_contracts(input, &events);
        prop_assert_eq!(summary(&events), summary(&whole), "{} splits {:?}", d, splits);
    }

    /// Every byte-by-byte run agrees too (the hardest split).
    #[test]
    fn one_byte_chunks_agree(which in 0usize..1000, auto in any::<bool>()) {
        let (d, input) = INPUTS[which % INPUTS.len()];
        let input = input.as_bytes();
        let cfg = cfg(d, auto);
        let whole = run_split(input, &[], &cfg);
        let splits: Vec<usize> = (1..input.len()).collect();
        let events = run_split(input, &splits, &cfg);
        check_contracts(input, &events);
        prop_assert_eq!(summary(&events), summary(&whole), "{}", d);
    }
}

/// The pythonic and Gemma cut keeps whole values and characters: the
/// arguments are a prefix of the uncut ones, closed.
#[test]
fn the_cut_keeps_whole_tokens() {
    let input = "[f(a=1111111111, b=2222222222, c=3333333333, d=4444444444, e=5555555555, f=6666666666, g=7777777777)]";
    let ev = run_split(input.as_bytes(), &[], &cfg(Dialect::Pythonic, false));
    let (_, _, calls) = summary(&ev);
    assert_eq!(
        calls[0].arguments,
        r#"{"a": 1111111111, "b": 2222222222, "c": 3333333333}"#
    );
    let input =
        "call:f{s:<escape>日本語のテキストです。日本語のテキストです。日本語のテキスト<escape>}";
    let ev = run_split(input.as_bytes(), &[], &cfg(Dialect::FunctionGemma, false));
    let (_, _, calls) = summary(&ev);
    let a = &calls[0].arguments;
    assert!(
        a.len() <= LIMIT + 2 && a.starts_with(r#"{"s": "日本語"#) && a.ends_with("\"}"),
        "{a}"
    );
}

/// An XML value cut by the limit ends on a character boundary: no
/// `invalid_utf8` repair, the value is the input's text up to the cut, and
/// the text after the call starts on a whole character — at every split.
#[test]
fn xml_limit_cut_never_splits_a_character() {
    // The 3-byte characters put the limit byte inside one of them for some
    // prefix length; try every alignment.
    for pad in 0..4 {
        let value = format!("{}{}", "a".repeat(pad), "日本語のテキスト".repeat(8));
        let input = format!(
            "<tool_call>\n<function=write>\n<parameter=text>\n{value}\n</parameter>\n</function>\n</tool_call>After."
        );
        let cfg = cfg(Dialect::Qwen3Coder, true);
        let parsed = common::check_all(input.as_bytes(), &cfg);
        let call = &parsed.calls[0];
        assert!(
            call.repairs
                .iter()
                .any(|r| r.kind == RepairKind::LimitExceeded),
            "{call:?}"
        );
        assert!(
            !call
                .repairs
                .iter()
                .any(|r| r.kind == RepairKind::InvalidUtf8),
            "pad {pad}: {call:?}"
        );
        let args = call.arguments_value().expect("valid JSON");
        let text = args["text"].as_str().expect("a string value");
        assert!(value.starts_with(text), "pad {pad}: {text:?}");
        assert!(!text.is_empty());
        assert!(
            !parsed.text.contains('\u{FFFD}'),
            "pad {pad}: {:?}",
            parsed.text
        );
    }
}

/// A name or GLM key longer than `max_tag_bytes` ends its block at the byte
/// that crosses the limit, whatever character that byte is in, at every
/// alignment of a multi-byte character on the limit and at every split
/// (fuzz finding `content_split-18`: the cut backed off to the character's
/// start, which byte-by-byte feeding had already read).
#[test]
fn long_names_end_the_block_at_the_same_byte_at_every_split() {
    let cfg = Config::default().with_limits(Limits {
        max_tag_bytes: 16,
        ..Limits::default()
    });
    for pad in 10..18 {
        for ch in ["é", "日", "🦀"] {
            for (open, close) in [
                (
                    "<tool_call><name>",
                    "</name><arguments>{}</arguments></tool_call>",
                ),
                (
                    "<tool_call>f\n<arg_key>",
                    "</arg_key><arg_value>1</arg_value></tool_call>",
                ),
            ] {
                let input = format!("{open}{}{ch}{ch}{close} [g(x=1)] after", "a".repeat(pad));
                common::check_all(input.as_bytes(), &cfg);
            }
        }
    }
}

/// A JSON call cut by the limit at every byte of its arguments (inside a
/// key, after a comma, inside a number, a literal, an escape or a surrogate
/// pair): the deltas handed out before the cut are never taken back, so the
/// final arguments extend them, and every split agrees.
#[test]
fn a_json_cut_anywhere_extends_the_deltas() {
    let input = r#"<tool_call>{"name": "f", "arguments": {"id": "007", "opts": [1.5e+3, true, null, -2], "s": "a\"b\\c\u00e9\ud83d\ude00日本", "n": {"k": false}}}</tool_call>After."#;
    let input = input.as_bytes();
    for limit in 1..150 {
        let whole = agree_at_args_limit(input, limit);
        let (_, _, calls) = summary(&whole);
        assert_eq!(calls.len(), 1, "limit {limit}");
        let cut = calls[0]
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::LimitExceeded);
        assert_eq!(cut, calls[0].truncated, "limit {limit}: {:?}", calls[0]);
    }
}

/// A candidate that reads nothing while it is undecided, past the hold
/// limit: its first byte is given back as text and scanning goes on after
/// it (it was opened again at the same byte, forever).
#[test]
fn an_undecided_candidate_at_the_hold_limit_moves_on() {
    let input = b"['\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfff(";
    let cfg = Config::default().with_limits(Limits {
        max_held_bytes: 16,
        ..Limits::default()
    });
    let whole = run_split(input, &[], &cfg);
    check_contracts(input, &whole);
    let bytes: Vec<usize> = (1..input.len()).collect();
    let split = run_split(input, &bytes, &cfg);
    check_contracts(input, &split);
    assert_eq!(summary(&split), summary(&whole));
    let (text, _, calls) = summary(&whole);
    assert!(calls.is_empty());
    assert_eq!(text, input);
}

/// Every argument limit from 1 byte to past the whole arguments, in the
/// dialect families that cut their own arguments: whole, byte by byte and
/// in 3-byte chunks agree, and the contracts hold. (The XML emulation's
/// limit counted from where the feed that finished the call's name began,
/// so it moved with the chunks.)
#[test]
fn every_limit_is_chunk_invariant() {
    let inputs: [&str; 4] = [
        "<tool_call>\n<name>get_weather</name>\n<arguments>\n<city>London</city>\n<days>3</days>\n</arguments>\n</tool_call>\nAfter.",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis é\n</parameter>\n<parameter=days>\n12\n</parameter>\n</function>\n</tool_call>After.",
        "[get_weather(city='Paris \"x\" é', days=12345, opts={'a': [1, True, None]})]\nAfter.",
        "<|python_tag|>print(\"hello\\tworld\")\n\u{0}\u{0} x = 1<|eom_id|>After.",
    ];
    for input in inputs {
        for limit in 1..120 {
            agree_at_args_limit(input.as_bytes(), limit);
        }
    }
}

/// With `max_args_bytes` = `limit`, `input` keeps the contracts whole, byte
/// by byte and in 3-byte chunks, and the three agree. Returns the whole
/// input's events.
fn agree_at_args_limit(input: &[u8], limit: usize) -> Vec<toolstream::Event> {
    let cfg = Config::default().with_limits(Limits {
        max_args_bytes: limit,
        ..Limits::default()
    });
    let whole = run_split(input, &[], &cfg);
    check_contracts(input, &whole);
    let bytes: Vec<usize> = (1..input.len()).collect();
    let threes: Vec<usize> = (1..)
        .map(|i| i * 3)
        .take_while(|&s| s < input.len())
        .collect();
    for cuts in [bytes, threes] {
        let split = run_split(input, &cuts, &cfg);
        check_contracts(input, &split);
        assert_eq!(
            summary(&split),
            summary(&whole),
            "limit {limit}, {:?}",
            String::from_utf8_lossy(input)
        );
    }
    whole
}

/// [`Limits::max_repairs`]: input that needs a repair per byte (stray
/// commas and closers, control characters, invalid escapes, duplicate
/// parameters, …) lists at most that many repairs per call, the ones at the
/// lowest offsets, then one `RepairsOmitted` at the first one left out; the
/// arguments are those of the unlimited list, at every split. Without the
/// limit, 4 MB of commas listed 4 million repairs (3.6 GB in the CLI's
/// output).
#[test]
fn repair_lists_are_bounded() {
    const MAX: usize = 16;
    let many = |unit: &str| unit.repeat(200);
    let inputs: Vec<String> = vec![
        format!(
            "<tool_call>{{\"name\":\"f\",\"arguments\":{{\"a\":1{}}}}}</tool_call>",
            many(",")
        ),
        format!(
            "<tool_call>{{\"name\":\"f\",\"arguments\":{{}}}}{}</tool_call>",
            many("}")
        ),
        format!(
            "<tool_call>{{\"name\":\"f\",\"arguments\":{{\"a\":\"{}\"}}}}</tool_call>",
            many("\u{1}")
        ),
        format!(
            "{{\"name\":\"f\",\"arguments\":{{\"a\":'{}'}}}}",
            many("\\q")
        ),
        format!("[f(a=1{})]", many(",")),
        format!(
            "<tool_call><name>f</name><arguments>{}</arguments></tool_call>",
            many("<a>1</a>")
        ),
        format!(
            "<tool_call>\n<function=f>\n{}</function>\n</tool_call>",
            many("<parameter=a>\n1\n</parameter>\n")
        ),
        // The special-token dialects' arguments reader, Harmony's,
        // stringified arguments, repairs of several
        // kinds interleaved, several calls in one value (each its own list).
        format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{{\"a\": 1{}}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            many(",")
        ),
        format!("[TOOL_CALLS]f[ARGS]{{\"a\": 1{}}}", many(",'b':True")),
        format!(
            "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{{\"a\": 1{}}}<|call|>",
            many(",")
        ),
        format!(
            "<tool_call>{{\"name\":\"f\",\"arguments\":\"{{\\\"a\\\":1{}}}\"}}</tool_call>",
            many(",,'b':None")
        ),
        format!(
            "<tool_call>[{{\"name\":\"f\",\"arguments\":{{\"a\":1{}}}}}, {{\"name\":\"g\",\"arguments\":{{'b':2{}}}}}]</tool_call>",
            many(","),
            many(",'c':None")
        ),
    ];
    let limited = Config::default().with_limits(Limits {
        max_repairs: MAX,
        ..Limits::default()
    });
    for input in &inputs {
        let input = input.as_bytes();
        let free = common::calls(&run_split(input, &[], &Config::default()));
        assert!(
            !free.is_empty(),
            "no call in {:?}",
            String::from_utf8_lossy(input)
        );
        for cuts in [vec![], (1..input.len()).step_by(7).collect::<Vec<_>>()] {
            let events = run_split(input, &cuts, &limited);
            check_contracts(input, &events);
            let calls = common::calls(&events);
            assert_eq!(calls.len(), free.len());
            for (c, f) in calls.iter().zip(&free) {
                assert_eq!(c.arguments, f.arguments);
                assert!(
                    f.repairs.len() > MAX,
                    "{} repairs only: {:?}",
                    f.repairs.len(),
                    String::from_utf8_lossy(&input[..60])
                );
                assert_eq!(
                    c.repairs.len(),
                    MAX + 1,
                    "{:?}",
                    String::from_utf8_lossy(input)
                );
                assert_eq!(c.repairs[..MAX], f.repairs[..MAX]);
                let last = c.repairs[MAX];
                assert_eq!(last.kind, RepairKind::RepairsOmitted);
                assert_eq!(last.offset, f.repairs[MAX].offset);
            }
        }
    }
}
