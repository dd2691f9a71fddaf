//! Repairs point at the bytes they are about, the same at every chunking:
//! never past the end of the input, one offset per bad byte, and bytes
//! that are not UTF-8 in XML names and keys are reported like those in
//! values.

mod common;

use toolstream::provider::{decode, decode_chunks, DecodeOptions, Provider};
use toolstream::{Config, Limits, RepairKind};

fn repairs(input: &[u8]) -> Vec<(RepairKind, u64)> {
    let parsed = common::check_all(input, &Config::default());
    assert_eq!(
        parsed.calls.len(),
        1,
        "{:?}",
        String::from_utf8_lossy(input)
    );
    parsed.calls[0]
        .repairs
        .iter()
        .map(|r| (r.kind, r.offset))
        .collect()
}

/// `<tool_call>{"name": "f"` (23 bytes): the closing brace the end of the
/// input supplies is at byte 23; `missing_arguments` was filed at 24.
#[test]
fn missing_arguments_is_inside_the_input() {
    for input in [
        &br#"<tool_call>{"name": "f""#[..],
        br#"<tool_call>{"name": "f", "#,
    ] {
        for (kind, offset) in repairs(input) {
            assert!(
                offset <= input.len() as u64,
                "{kind:?} at {offset} of {}",
                input.len()
            );
        }
        assert!(repairs(input).contains(&(RepairKind::MissingArguments, input.len() as u64)));
    }
}

/// Two bad bytes in one XML value: two repairs, each at its byte (both
/// were filed at the value's start).
#[test]
fn each_bad_byte_of_an_xml_value_has_its_offset() {
    let input = b"<tool_call>\n<function=f>\n<parameter=a>\nx\xffy\xfez\n</parameter>\n</function>\n</tool_call>";
    assert_eq!(
        repairs(input),
        [(RepairKind::InvalidUtf8, 40), (RepairKind::InvalidUtf8, 42)]
    );
    // A character cut by the end of the value.
    let input = b"<tool_call>\n<function=f>\n<parameter=a>\nabc\xe6\x97\n</parameter>\n</function>\n</tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 42)]);
}

/// Names and keys that are not UTF-8 are read with U+FFFD, as values are,
/// and say so (they recorded nothing).
#[test]
fn bad_bytes_in_xml_names_and_keys_are_repairs() {
    let input = b"<tool_call>\n<function=f\xff>\n<parameter=a\xfe>\n1\n</parameter>\n</function>\n</tool_call>";
    let r = repairs(input);
    assert_eq!(
        r.iter()
            .filter(|(k, _)| *k == RepairKind::InvalidUtf8)
            .count(),
        2,
        "{r:?}"
    );
    let input = b"<tool_call>f\n<arg_key>k\xff</arg_key><arg_value>v</arg_value></tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 22)]);
    let input = b"<tool_call>g\xff\n<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 11)]);
}

/// One OpenAI chat-completions frame carrying `args` as a fragment of
/// call 0's arguments (the first also names the call).
fn openai_frame(args: &str, first: bool) -> String {
    let args = serde_json::to_string(args).unwrap();
    let head = if first {
        r#""id":"call_1","type":"function","function":{"name":"f","arguments":"#
    } else {
        r#""function":{"arguments":"#
    };
    format!(
        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,{head}{args}}}}}]}}}}]}}\n\n"
    )
}

/// The `limit_exceeded` offsets of the one call in `events`.
fn limit_offsets(events: &[toolstream::Event]) -> Vec<u64> {
    let calls = common::calls(events);
    assert_eq!(calls.len(), 1, "{events:?}");
    assert!(calls[0].truncated, "{:?}", calls[0]);
    calls[0]
        .repairs
        .iter()
        .filter(|r| r.kind == RepairKind::LimitExceeded)
        .map(|r| r.offset)
        .collect()
}

/// Parse and decode report a call's `limit_exceeded` by one rule, at every
/// chunking (docs/limits.md, "Where a limit is reported"): `max_depth` at
/// the opener past the limit (decode: the frame holding that byte),
/// `max_args_bytes` where the value holding the arguments began (parse:
/// the call's JSON envelope; decode: the first frame carrying an argument
/// byte), whichever frame or chunk the limit itself fell in. Decode used
/// to report `max_args_bytes` at the frame where the cut fell, and
/// `max_depth` twice.
#[test]
fn parse_and_decode_report_a_limit_at_the_same_place() {
    // The arguments, in three fragments for the stream; the deep one's
    // fourth `[` is the opener past `max_depth: 4` (the envelope counts).
    let long = [r#"{"a": "0123"#, r#"456789abcdef"#, r#"ghijklmnop"}"#];
    let deep = [r#"{"a": [1, "#, r#"[2, [[[3"#, r#"]]]]]}"#];
    let by_bytes = Limits {
        max_args_bytes: 12,
        ..Limits::default()
    };
    let by_depth = Limits {
        max_depth: 4,
        ..Limits::default()
    };
    for (frags, limits, what) in [(long, by_bytes, "bytes"), (deep, by_depth, "depth")] {
        let args: String = frags.concat();
        // Parse: the call as model text.
        let text = format!(r#"<tool_call>{{"name": "f", "arguments": {args}}}</tool_call>"#);
        let envelope = text.find('{').unwrap() as u64;
        let args_at = text.find(&args).unwrap();
        let cfg = Config::default().with_limits(limits.clone());
        let parsed = common::check_all(text.as_bytes(), &cfg);
        assert_eq!(parsed.calls.len(), 1);
        let parse_at = limit_offsets(&common::run_split(text.as_bytes(), &[], &cfg));
        // Decode: the same call as a stream, one fragment per frame.
        let mut stream = String::new();
        let mut frame_at = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            frame_at.push(stream.len() as u64);
            stream.push_str(&openai_frame(f, i == 0));
        }
        stream.push_str("data: [DONE]\n\n");
        let opts = DecodeOptions {
            config: cfg.clone(),
            ..DecodeOptions::default()
        }
        .with_provider(Provider::OpenAi);
        // The frame holding argument byte `k`.
        let frame_of = |k: usize| {
            let mut end = 0;
            frags.iter().zip(&frame_at).find_map(|(f, &at)| {
                end += f.len();
                (k < end).then_some(at)
            })
        };
        let (want_parse, want_decode) = if what == "depth" {
            // The opener past the limit. Parse: the envelope, the
            // arguments, `[` and `[` are four levels, the third `[` is cut.
            // Decode: the arguments alone, so the fourth `[` (the
            // envelope's levels count only where there is one).
            let k = args.match_indices('[').nth(2).unwrap().0;
            let j = args.match_indices('[').nth(3).unwrap().0;
            ((args_at + k) as u64, frame_of(j).unwrap())
        } else {
            (envelope, frame_at[0])
        };
        assert_eq!(parse_at, [want_parse], "parse, {what}");
        let whole = decode(stream.as_bytes(), &opts);
        assert_eq!(limit_offsets(&whole), [want_decode], "decode, {what}");
        for n in 1..=stream.len().min(64) {
            let events = decode_chunks(stream.as_bytes().chunks(n), &opts);
            assert_eq!(common::calls(&events), common::calls(&whole), "{what}, {n}");
            for c in common::calls(&events) {
                for r in &c.repairs {
                    assert!(r.offset < stream.len() as u64, "{r:?} past the stream");
                }
            }
        }
        for n in 1..=text.len() {
            let events = common::run_chunked(text.as_bytes(), n, &cfg);
            assert_eq!(limit_offsets(&events), [want_parse], "parse, {what}, {n}");
        }
    }
}
