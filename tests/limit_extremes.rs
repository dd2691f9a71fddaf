//! Every [`Limits`] field is safe at any value: 0, 1, `usize::MAX` and
//! everything between. A property over random limits (each field drawn
//! from the extremes and from small and default values) × random inputs
//! (catalogue examples of every dialect family, spliced, with random bytes
//! and deep nesting) × random chunkings: no panic, no hang, and every
//! contract holds — lossless spans, deltas adding up to JSON-object
//! arguments, chunk invariance (random splits, 1-byte and 3-byte feeds,
//! `feed_bytes`), bounded output. The JSON repairer and the provider
//! decoder run under the same limits.
//!
//! `PROPTEST_CASES=100000 cargo test --profile test-release --test
//! limit_extremes` for a long run.

mod catalogue;
mod common;

use catalogue::EXAMPLES;
use common::{cases, check_contracts, fuzz_checks, run_split, summary};
use proptest::prelude::*;
use toolstream::provider::DecodeOptions;
use toolstream::{Config, DiagnosticKind, Event, Limits, Parser, Tools};

/// Inputs beyond the catalogue: JSON calls of the text dialects, XML
/// dialects, deep nesting, blanks that are not ASCII, bytes that are not
/// UTF-8.
const EXTRA: &[&[u8]] = &[
    br#"Hi <tool_call>{"name":"f","arguments":{}}</tool_call>"#,
    b"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"n\": [1, 2.5, {\"k\": null}]}}\n</tool_call>\nDone.",
    b"```json\n{\"name\": \"f\", \"arguments\": {\"a\": \"x\\\"y\\u00e9\"}}\n```\nAfter.",
    b"{\"name\": \"f\", \"arguments\": {\"a\": 1,,, \"b\": 'q', \"c\": [1, 2}",
    b"<tool_call>\n<function=get_weather>\n<parameter=city>\nParis \xc3\xa9\n</parameter>\n<parameter=days>\n12\n</parameter>\n</function>\n</tool_call>",
    b"<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls -la</parameter>\n</invoke>\n</minimax:tool_call>",
    b"<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
    b"<tool_call><name>f</name><arguments><a>1</a><b>x\xff</b></arguments></tool_call>",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    b"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}</tool_call>",
    b"<tool_call>\xc2\xa0{\"name\":\"f\",\"arguments\":{}}</tool_call>",
    b"<tool_call>\xef\xbb\xbf\xe2\x80\x8b\xe3\x80\x80\xff{\"name\":\"f\"}</tool_call>",
    b"<think>plan \xe6\x97\xa5</think>[get_weather(city='Paris', days=3)]",
    b"{'",
    b"{",
    b"<",
    b"\xff\xfe\xfd",
];

fn inputs() -> Vec<&'static [u8]> {
    EXAMPLES
        .iter()
        .map(|e| e.input.as_bytes())
        .chain(EXTRA.iter().copied())
        .collect()
}

/// One limit value: the extremes, small values and the default's order.
fn limit_value() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => Just(0usize),
        3 => Just(1usize),
        3 => Just(usize::MAX),
        1 => Just(usize::MAX - 1),
        1 => Just(usize::MAX / 2 + 1),
        1 => Just(2usize),
        3 => 0usize..64,
        1 => 64usize..4096,
        1 => 4096usize..(1 << 20),
    ]
}

/// Random limits, every field drawn independently.
fn limits() -> impl Strategy<Value = Limits> {
    (
        limit_value(),
        limit_value(),
        limit_value(),
        limit_value(),
        limit_value(),
        limit_value(),
        prop_oneof![3 => Just(usize::MAX), 1 => limit_value()],
    )
        .prop_map(|(d, a, h, t, g, r, i)| Limits {
            max_depth: d,
            max_args_bytes: a,
            max_held_bytes: h,
            max_token_bytes: t,
            max_tag_bytes: g,
            max_repairs: r,
            max_input_bytes: i,
        })
}

/// Spliced pieces of the inputs, with random bytes between some of them.
fn input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        (
            0usize..1000,
            0usize..10_000,
            0usize..200,
            prop::collection::vec(any::<u8>(), 0..3),
        ),
        1..6,
    )
    .prop_map(|pieces| {
        let all = inputs();
        let mut out = Vec::new();
        for (which, start, len, noise) in pieces {
            let input = all[which % all.len()];
            // Whole inputs half the time, a piece of one otherwise.
            let start = if which % 2 == 0 {
                0
            } else {
                start % (input.len() + 1)
            };
            let end = if which % 2 == 0 {
                input.len()
            } else {
                (start + len).min(input.len())
            };
            out.extend_from_slice(&input[start..end]);
            out.extend_from_slice(&noise);
        }
        out
    })
}

fn tools() -> Tools {
    Tools::from_json(
        r#"[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}},
            {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}}]"#,
    )
    .expect("tools")
}

/// The contracts for `input` under `cfg`: whole, at `splits`, byte by byte
/// and in 3-byte chunks, each keeps the contracts and all agree;
/// `feed_bytes` gives `feed`'s events.
fn check(input: &[u8], splits: &[usize], cfg: &Config) -> Result<(), TestCaseError> {
    fuzz_checks::check_content(input, splits, cfg);
    let whole = run_split(input, &[], cfg);
    let want = summary(&whole);
    for n in [1, 3] {
        let cuts: Vec<usize> = (1..)
            .map(|k| k * n)
            .take_while(|&s| s < input.len())
            .collect();
        let ev = run_split(input, &cuts, cfg);
        check_contracts(input, &ev);
        prop_assert_eq!(
            summary(&ev),
            want.clone(),
            "{}-byte chunks differ for {:?} under {:?}",
            n,
            String::from_utf8_lossy(input),
            cfg.limits
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(384), ..ProptestConfig::default() })]

    /// The content parser, under auto-detection and with tools offered.
    #[test]
    fn any_limits_keep_the_contracts(
        limits in limits(),
        input in input(),
        cuts in prop::collection::vec(0usize..10_000, 0..16),
        with_tools in any::<bool>(),
    ) {
        let splits = common::splits_from(&cuts, input.len());
        let mut cfg = Config::default().with_limits(limits);
        if with_tools {
            cfg = cfg.with_tools(tools());
        }
        check(&input, &splits, &cfg)?;
    }

    /// The JSON repairer under the same limits: valid UTF-8 JSON out, its
    /// fast, unit and slow paths agree, whole and split.
    #[test]
    fn any_limits_keep_the_repairer_sound(
        limits in limits(),
        input in input(),
        cuts in prop::collection::vec(0usize..10_000, 0..16),
    ) {
        let splits = common::splits_from(&cuts, input.len());
        fuzz_checks::check_repair_under(&input, &splits, &limits);
    }

    /// The provider decoder (auto-detected, content re-parsed) under the
    /// same limits, on the recorded streams of the corpus cut at random.
    #[test]
    fn any_limits_keep_the_decoder_sound(
        limits in limits(),
        frame in limit_value(),
        which in 0usize..100,
        cuts in prop::collection::vec(0usize..100_000, 0..16),
    ) {
        let streams = corpus_streams();
        let input = &streams[which % streams.len()];
        let splits = common::splits_from(&cuts, input.len());
        let opts = DecodeOptions {
            config: Config::default().with_limits(limits.clone()),
            frame_limits: toolstream::frame::FrameLimits { max_frame_bytes: frame },
            reparse: Some(Config::default().with_limits(limits)),
            ..DecodeOptions::default()
        };
        fuzz_checks::check_provider_with(input, &splits, &opts);
    }
}

/// The recorded provider streams of `corpus/streams/`.
fn corpus_streams() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/streams");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/streams")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no streams in {}", dir.display());
    files
        .iter()
        .map(|p| std::fs::read(p).expect("stream"))
        .collect()
}

/// Every field at 0, 1 and `usize::MAX` in turn (the others at their
/// defaults, then all of them at once), on every input, whole and byte by
/// byte. `max_held_bytes` 0 hung (the same empty candidate was opened and
/// given back forever, 0.5 GB/s of diagnostics) and `usize::MAX` panicked
/// (an overflowing addition, then a bad slice).
#[test]
fn every_field_at_its_extremes() {
    let set: [fn(&mut Limits, usize); 7] = [
        |l, v| l.max_depth = v,
        |l, v| l.max_args_bytes = v,
        |l, v| l.max_held_bytes = v,
        |l, v| l.max_token_bytes = v,
        |l, v| l.max_tag_bytes = v,
        |l, v| l.max_repairs = v,
        |l, v| l.max_input_bytes = v,
    ];
    let mut configs = Vec::new();
    for v in [0, 1, usize::MAX] {
        for f in &set {
            let mut l = Limits::default();
            f(&mut l, v);
            configs.push(l);
        }
        let mut all = Limits::default();
        for f in &set {
            f(&mut all, v);
        }
        configs.push(all);
    }
    for limits in configs {
        let cfg = Config::default().with_limits(limits);
        for input in inputs() {
            common::check_all(input, &cfg);
        }
    }
}

/// `max_held_bytes` 0: nothing undecided is held, so a candidate call gives
/// its first byte back as text with one diagnostic, and scanning moves on.
#[test]
fn nothing_held_at_max_held_zero() {
    let cfg = Config::default().with_limits(Limits {
        max_held_bytes: 0,
        ..Limits::default()
    });
    let mut p = Parser::new(cfg.clone());
    let mut out = Vec::new();
    p.feed(b"{", &mut out);
    p.finish(&mut out);
    check_contracts(b"{", &out);
    assert!(
        out.iter().any(|e| matches!(
            e,
            Event::Diagnostic {
                kind: DiagnosticKind::LimitExceeded,
                ..
            }
        )),
        "{out:?}"
    );
    assert_eq!(summary(&out).0, b"{");
    assert!(out.len() <= 3, "{out:?}");
}

/// `max_held_bytes` `usize::MAX`: no limit, the call parses as with the
/// default.
#[test]
fn max_held_at_usize_max_is_no_limit() {
    let input = br#"Hi <tool_call>{"name":"f","arguments":{}}</tool_call>"#;
    let cfg = Config::default().with_limits(Limits {
        max_held_bytes: usize::MAX,
        ..Limits::default()
    });
    let parsed = common::check_all(input, &cfg);
    assert_eq!(parsed.calls.len(), 1);
    assert_eq!(parsed.calls[0].name, "f");
    assert_eq!(parsed.calls[0].arguments, "{}");
    assert!(parsed.calls[0].repairs.is_empty());
    assert!(!parsed.calls[0].truncated);
}

/// Found by `any_limits_keep_the_contracts`: with `max_token_bytes` 0, the
/// arguments `null` left by a depth-limited envelope were handed out as
/// the delta `null` while the final arguments were `{}`. A literal longer
/// than a token is written as `{"value": …}` from its first bytes.
#[test]
fn a_literal_longer_than_a_token_is_wrapped_from_the_start() {
    let input = br#"<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Boston"}}]"#;
    let cfg = Config::default().with_tools(tools()).with_limits(Limits {
        max_depth: 0,
        max_args_bytes: 4,
        max_held_bytes: 64,
        max_token_bytes: 0,
        max_tag_bytes: 0,
        max_repairs: 0,
        ..Limits::default()
    });
    let parsed = common::check_all(input, &cfg);
    for c in &parsed.calls {
        assert!(c.truncated, "{c:?}");
    }
}

/// `max_input_bytes`: the stream ends at that byte whatever the chunking —
/// the call open there is cut (`truncated`, a `limit_exceeded` repair at
/// the cap), one diagnostic says so, and the rest is text, unparsed.
#[test]
fn the_input_cap_ends_the_stream_at_its_byte() {
    let input = br#"Hi <tool_call>{"name":"f","arguments":{"a": "xyz"}}</tool_call> [g(x=1)]"#;
    for cap in [0, 1, 3, 20, 40, input.len() - 1, input.len(), usize::MAX] {
        let cfg = Config::default().with_limits(Limits {
            max_input_bytes: cap,
            ..Limits::default()
        });
        let parsed = common::check_all(input, &cfg);
        if cap >= input.len() {
            assert_eq!(parsed.calls.len(), 2, "cap {cap}");
            continue;
        }
        // A call the cap cuts is never presented as clean.
        assert!(
            parsed
                .calls
                .iter()
                .all(|c| c.name == "f" || c.truncated || !c.repairs.is_empty()),
            "cap {cap}: {:?}",
            parsed.calls
        );
        let capped = parsed
            .events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::Diagnostic {
                        kind: DiagnosticKind::LimitExceeded,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(capped, 1, "cap {cap}: {:?}", parsed.events);
        if cap == 40 {
            let c = &parsed.calls[0];
            assert!(c.truncated);
            assert_eq!(
                c.repairs.last().map(|r| (r.kind, r.offset)),
                Some((toolstream::RepairKind::LimitExceeded, 40))
            );
            assert!(parsed.text.ends_with("</tool_call> [g(x=1)]"));
        }
    }
}

/// Found by `any_limits_keep_the_contracts` (CI, stop 53): Kimi K3's
/// header bound `max_tag_bytes + 1` overflowed at `usize::MAX - 1` and
/// `usize::MAX`. Release builds wrapped it: at `usize::MAX - 1` the
/// section ended one byte *before* the header it was reading (the bytes
/// `>call ` were lost when fed byte by byte), at `usize::MAX` no header
/// ever fitted and no call was read. Any tag bound reads the call.
#[test]
fn kimi_k3_headers_at_any_tag_bound() {
    let input = b"<|open|>tools<|sep|>\n<|open|>call tool=\"read\" index=\"1\"<|sep|>\n<|open|>argument key=\"path\" type=\"string\"<|sep|>/a.txt<|close|>argument<|sep|>\n<|close|>call<|sep|>\n<|close|>tools<|sep|>";
    for tag in [64, usize::MAX / 2 + 1, usize::MAX - 1, usize::MAX] {
        let cfg = Config::default().with_limits(Limits {
            max_tag_bytes: tag,
            ..Limits::default()
        });
        let parsed = common::check_all(input, &cfg);
        assert_eq!(parsed.calls.len(), 1, "max_tag_bytes {tag}");
        assert_eq!(parsed.calls[0].name, "read");
        assert_eq!(parsed.calls[0].arguments, r#"{"path": "/a.txt"}"#);
    }
    // The input that found it: every byte in one place at every chunking.
    let found: &[u8] = b"<|open|>tools<|sep|>\n<|open|>call tool=\"read\" ind\xe3-<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Shenzhen\"}}]</tool_calls>_calls_section_begin|><|tool_cal\xbe6";
    let cfg = Config::default().with_limits(Limits {
        max_depth: 0,
        max_args_bytes: 0,
        max_held_bytes: 0,
        max_token_bytes: 0,
        max_tag_bytes: usize::MAX - 1,
        max_repairs: 0,
        max_input_bytes: usize::MAX,
    });
    common::check_all(found, &cfg);
}
