//! The linear-work contract on hostile input: for each pattern below (a
//! prefix, one unit repeated, a suffix), parsing 16 times more units must
//! cost about 16 times more, whole, byte by byte and in 7-byte chunks.
//!
//! This asserts a growth exponent, not a speed: both sizes run on the same
//! machine a moment apart, so its speed cancels out of the ratio. A linear
//! parser measures a ratio near 16 (exponent 1); the bound is 64 (exponent
//! 1.5), and the quadratic paths this test was written for measured 200 to
//! 3,000 (a look-ahead that ran to the end of a long run, once per byte of
//! it: 2 MB of invalid UTF-8 in one string took 471 s). Each size is timed
//! as the best of several runs of this thread's CPU time (not wall time:
//! time the thread spends waiting for a core does not count), and a
//! pattern over the bound is measured again before it counts, so that a
//! busy machine does not fail it.
//!
//! Speed itself is measured by the criterion benches, never here.

use std::time::Duration;

use cpu_time::ThreadTime;

use toolstream::{Config, Event, Limits, Parser};

/// (name, prefix, unit, suffix).
type Pattern = (&'static str, &'static [u8], &'static [u8], &'static [u8]);

const PATTERNS: &[Pattern] = &[
    // Strings of the JSON repairer: invalid or cut UTF-8, escapes, quotes.
    (
        "invalid utf-8 in a string",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\xff",
        br#""}}</tool_call>"#,
    ),
    (
        "lead byte then ascii in a string",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\xc3(",
        br#""}}</tool_call>"#,
    ),
    (
        "valid and invalid utf-8 in a string",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\xc3\xa9\xff",
        br#""}}</tool_call>"#,
    ),
    (
        "invalid utf-8 in a single-quoted string",
        br#"<tool_call>{"name":"f","arguments":{"a":'"#,
        b"\xff",
        br#"'}}</tool_call>"#,
    ),
    (
        "lead byte then ascii in a single-quoted string",
        br#"<tool_call>{"name":"f","arguments":{"a":'"#,
        b"\xc3(",
        br#"'}}</tool_call>"#,
    ),
    (
        "invalid utf-8 in a smart-quoted string",
        b"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":\xe2\x80\x9c",
        b"\xc3\xa9\xff",
        b"\xe2\x80\x9d}}</tool_call>",
    ),
    (
        "invalid utf-8 in a key",
        br#"<tool_call>{"name":"f","arguments":{""#,
        b"\xff",
        br#"":1}}</tool_call>"#,
    ),
    (
        "invalid utf-8 in an unquoted key",
        br#"<tool_call>{"name":"f","arguments":{a"#,
        b"\xff",
        b":1}}</tool_call>",
    ),
    (
        "invalid utf-8 in a bare value",
        br#"<tool_call>{"name":"f","arguments":{"a":x"#,
        b"\xff",
        b"}}</tool_call>",
    ),
    (
        "a long bare word",
        br#"<tool_call>{"name":"f","arguments":{"a":x"#,
        b"y",
        b"}}</tool_call>",
    ),
    (
        "a long unquoted key",
        br#"<tool_call>{"name":"f","arguments":{"#,
        b"a",
        b":1}}</tool_call>",
    ),
    (
        "a long number",
        br#"<tool_call>{"name":"f","arguments":{"a":1"#,
        b"1",
        b"}}</tool_call>",
    ),
    (
        "control characters in a string",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\x01",
        br#""}}</tool_call>"#,
    ),
    (
        "invalid escapes",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\\q",
        br#""}}</tool_call>"#,
    ),
    (
        "inner quotes",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"x\"y",
        br#""}}</tool_call>"#,
    ),
    (
        "a < in a string",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"<x",
        br#""}}</tool_call>"#,
    ),
    (
        "lone surrogates",
        br#"<tool_call>{"name":"f","arguments":{"a":""#,
        b"\\ud800",
        br#""}}</tool_call>"#,
    ),
    (
        "extra commas",
        br#"<tool_call>{"name":"f","arguments":{"a":1"#,
        b",",
        b"}}</tool_call>",
    ),
    (
        "comments",
        br#"<tool_call>{"name":"f","arguments":{"a":1"#,
        b"/**/",
        b"}}</tool_call>",
    ),
    (
        "stray openers",
        br#"<tool_call>{"name":"f","arguments":{"#,
        b"{",
        br#""a":1}}</tool_call>"#,
    ),
    (
        "redundant closers after the call",
        br#"<tool_call>{"name":"f","arguments":{}}"#,
        b"}",
        b"</tool_call>",
    ),
    (
        "nested arrays",
        br#"{"name":"f","arguments":{"a":"#,
        b"[",
        b"}}",
    ),
    (
        // Each unit nests one deeper and stops the lane (an extra comma),
        // which arms again at the next chunk.
        "nesting with repairs",
        br#"<tool_call>{"name":"f","arguments":{"a":"#,
        b"[1,,",
        b"}}</tool_call>",
    ),
    (
        "stringified arguments",
        br#"<tool_call>{"name":"f","arguments":"{\"a\":\""#,
        b"\xff",
        br#"\"}"}</tool_call>"#,
    ),
    ("many calls in one array", b"[", br#"{"name":"f"},"#, b"]"),
    // Text: bytes that could start a call, or could not.
    ("invalid utf-8 in text", b"", b"\xff", b""),
    ("< in text", b"", b"<", b""),
    ("{ in text", b"", b"{", b""),
    ("[ in text", b"", b"[", b""),
    ("backticks in text", b"", b"`", b""),
    ("call-like text", b"", b"f(", b""),
    ("pythonic openers", b"", b"[f(", b""),
    ("opening tags", b"", b"<tool_call>", b""),
    ("call heads", b"", br#"{"name":"#, b""),
    ("reasoning openers", b"", b"<think>", b""),
    ("fence openers", b"", b"```json\n", b""),
    // Other dialects.
    ("pythonic string", b"[f(a=\"", b"\xc3(", b"\")]"),
    ("pythonic arguments", b"[f(", b"a=1,", b")]"),
    ("pythonic nesting", b"[f(a=", b"[", b")]"),
    ("pythonic stray closers", b"[f(a=", b"(]", b")]"),
    ("pythonic nested sets", b"[f(a=", b"{", b")]"),
    ("pythonic dicts as keys", b"[f(a=", b"{{'x':1}:", b")]"),
    (
        "xml emulation value",
        b"<tool_call><name>f</name><arguments><a>",
        b"\xff<&",
        b"</a></arguments></tool_call>",
    ),
    (
        "qwen3-coder value",
        b"<tool_call>\n<function=f>\n<parameter=a>\n",
        b"<\xff",
        b"\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "qwen3-coder json value",
        b"<tool_call>\n<function=f>\n<parameter=a>\n[",
        b"[",
        b"\n</parameter>\n</function>\n</tool_call>",
    ),
    ("llama code", b"<|python_tag|>", b"\xff", b"<|eom_id|>"),
    (
        "harmony",
        b"<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{\"a\":\"",
        b"\xff",
        b"\"}<|call|>",
    ),
    ("mistral", b"[TOOL_CALLS]f[ARGS]{\"a\":\"", b"\xff", b"\"}"),
    (
        "gemma 4",
        b"<|tool_call>call:f{s:<|\"|>",
        b"\xff",
        b"<|\"|>}<tool_call|>",
    ),
    // Many items: calls, arguments, blocks (`#` in a unit is its number).
    (
        "many hermes blocks",
        b"",
        br#"<tool_call>{"name":"f","arguments":{}}</tool_call>"#,
        b"",
    ),
    (
        "many bare json calls",
        b"",
        b"{\"name\":\"f#\",\"arguments\":{}}\n",
        b"",
    ),
    ("many pythonic calls", b"[", b"f#(a=1), ", b"]"),
    (
        "many mistral calls",
        b"[TOOL_CALLS][",
        br#"{"name":"f","arguments":{}},"#,
        b"]",
    ),
    (
        "many distinct arguments",
        br#"<tool_call>{"name":"f","arguments":{"#,
        br#""k#":1,"#,
        b"}}</tool_call>",
    ),
    (
        "many repeated arguments",
        br#"<tool_call>{"name":"f","arguments":{"#,
        br#""k":1,"#,
        b"}}</tool_call>",
    ),
    (
        "many xml parameters",
        b"<tool_call><name>f</name><arguments>",
        b"<p#>1</p#>",
        b"</arguments></tool_call>",
    ),
    (
        "many repeated xml parameters",
        b"<tool_call><name>f</name><arguments>",
        b"<p>1</p>",
        b"</arguments></tool_call>",
    ),
    (
        "many qwen3-coder parameters",
        b"<tool_call>\n<function=f>\n",
        b"<parameter=p#>\n1\n</parameter>\n",
        b"</function>\n</tool_call>",
    ),
    ("many pythonic arguments", b"[f(", b"a#=1, ", b")]"),
    ("many reasoning blocks", b"", b"<think>x</think>", b""),
    (
        "unnamed arguments (held)",
        br#"{"arguments": {"#,
        br#""k#": 1, "#,
        b"}}",
    ),
    (
        "unknown envelope keys (held)",
        br#"{"name": "f", "#,
        br#""x#": 1, "#,
        br#""arguments": {}}"#,
    ),
    (
        "a long call name",
        br#"<tool_call>{"name":""#,
        b"x",
        br#""}</tool_call>"#,
    ),
    ("a long reasoning block", b"<think>", b"x", b"</think>"),
    (
        "nested objects",
        br#"{"name":"f","arguments":"#,
        br#"{"a":"#,
        b"}",
    ),
    ("trigger prefixes in text", b"", b"<tool_", b""),
    ("an unclosed fence", b"```json\n", b"{\"a\":1}\n", b""),
    ("pythonic call lines", b"", b"f#(a=1)\n", b""),
    ("mistral tokens in text", b"", b"[TOOL_CALLS]", b""),
    (
        "a fenced array of calls",
        b"```json\n[",
        br#"{"name":"f#","arguments":{"a":1}},"#,
        b"]\n```",
    ),
    (
        "many deepseek calls",
        "<｜tool▁calls▁begin｜>".as_bytes(),
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>"
            .as_bytes(),
        "<｜tool▁calls▁end｜>".as_bytes(),
    ),
];

fn input(prefix: &[u8], unit: &[u8], suffix: &[u8], len: usize) -> Vec<u8> {
    let mut v = prefix.to_vec();
    let mut k = 0usize;
    while v.len() < prefix.len() + len {
        for &b in unit {
            if b == b'#' {
                v.extend_from_slice(k.to_string().as_bytes());
            } else {
                v.push(b);
            }
        }
        k += 1;
    }
    v.extend_from_slice(suffix);
    v
}

/// Limits that none of the patterns reaches, so that work bounded by a
/// limit still shows its growth (a 64 KiB number read byte by byte was
/// read again with each byte: quadratic up to the default token limit).
fn config() -> Config {
    Config::default().with_limits(Limits {
        max_token_bytes: 16 << 20,
        max_held_bytes: 16 << 20,
        max_args_bytes: 64 << 20,
        max_depth: 1 << 20,
        ..Limits::default()
    })
}

/// One parse, in `chunk`-byte pieces (0: whole).
fn parse(input: &[u8], chunk: usize, events: &mut Vec<Event>) {
    let mut p = Parser::new(config());
    for c in input.chunks(if chunk == 0 { input.len() } else { chunk }) {
        p.feed(c, events);
        events.clear();
    }
    p.finish(events);
    events.clear();
}

/// How much CPU time this thread spends in `run` on `input`.
fn time(mut run: impl FnMut(&[u8]), input: &[u8]) -> Duration {
    let t = ThreadTime::now();
    run(input);
    t.elapsed()
}

/// Time of `large` over time of `small`, each the best of a few runs; a
/// ratio over `bound` is measured again (up to six more times, keeping the
/// best time of each): a busy machine can stall any one run, even by more
/// than a quadratic parse would cost, but not every run of a linear one.
fn ratio(small: &[u8], large: &[u8], bound: f64, mut run: impl FnMut(&[u8])) -> f64 {
    let mut s = Duration::MAX;
    for _ in 0..3 {
        s = s.min(time(&mut run, small));
    }
    let mut l = time(&mut run, large);
    // A parse too quick to time says nothing about growth.
    let r =
        |s: Duration, l: Duration| l.as_secs_f64() / s.max(Duration::from_micros(20)).as_secs_f64();
    for _ in 0..6 {
        if r(s, l) <= bound {
            break;
        }
        s = s.min(time(&mut run, small));
        l = l.min(time(&mut run, large));
    }
    r(s, l)
}

#[test]
fn work_grows_linearly_on_hostile_input() {
    const SMALL: usize = 16 << 10;
    const GROWTH: usize = 16;
    const BOUND: f64 = 64.0;
    // Warm the dialect table and the allocator.
    parse(&input(b"", b"x", b"", SMALL), 0, &mut Vec::new());
    // `LINEAR_ONLY=text` measures only the patterns whose name holds it;
    // `LINEAR_PRINT=1` prints every ratio.
    let only = std::env::var("LINEAR_ONLY").unwrap_or_default();
    let mut over = Vec::new();
    for &(name, prefix, unit, suffix) in PATTERNS.iter().filter(|p| p.0.contains(only.as_str())) {
        let small = input(prefix, unit, suffix, SMALL);
        let large = input(prefix, unit, suffix, SMALL * GROWTH);
        for chunk in [0, 1, 7] {
            let mut events = Vec::new();
            let ratio = ratio(&small, &large, BOUND, |i| parse(i, chunk, &mut events));
            if std::env::var_os("LINEAR_PRINT").is_some() {
                eprintln!("{ratio:6.1} {name} (chunk {chunk})");
            }
            if ratio > BOUND {
                over.push(format!(
                    "{name} (chunk {chunk}): {ratio:.0}x the time for {GROWTH}x the input"
                ));
            }
        }
    }
    assert!(over.is_empty(), "superlinear work:\n{}", over.join("\n"));
}

/// Provider streams with many calls: all open at once (parallel calls whose
/// arguments arrive after every call has begun), and one after another, in
/// four protocols.
#[test]
fn provider_streams_grow_linearly() {
    use toolstream::{DecodeOptions, Provider, StreamDecoder};
    const GROWTH: usize = 16;
    const BOUND: f64 = 64.0;
    fn openai(calls: usize, parallel: bool) -> Vec<u8> {
        let frame = |i: usize, head: bool| {
            let call = if head {
                format!(
                    r#"{{"index":{i},"id":"c{i}","type":"function","function":{{"name":"f","arguments":"{{\"a\":"}}}}"#
                )
            } else {
                format!(r#"{{"index":{i},"function":{{"arguments":"1}}"}}}}"#)
            };
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{call}]}}}}]}}\n\n"
            )
        };
        let mut s = String::new();
        if parallel {
            (0..calls).for_each(|i| s += &frame(i, true));
            (0..calls).for_each(|i| s += &frame(i, false));
        } else {
            for i in 0..calls {
                s += &frame(i, true);
                s += &frame(i, false);
            }
        }
        s += "data: [DONE]\n\n";
        s.into_bytes()
    }
    fn anthropic(calls: usize) -> Vec<u8> {
        let mut s = String::new();
        for i in 0..calls {
            s += &format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"f\",\"input\":{{}}}}}}\n\n");
            s += &format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"a\\\": 1}}\"}}}}\n\n");
            s += &format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n");
        }
        s.into_bytes()
    }
    fn responses(calls: usize) -> Vec<u8> {
        let ev =
            |t: &str, body: String| format!("event: {t}\ndata: {{\"type\":\"{t}\",{body}}}\n\n");
        let mut s = String::new();
        for i in 0..calls {
            s += &ev(
                "response.output_item.added",
                format!(
                    r#""output_index":{i},"item":{{"type":"function_call","id":"fc{i}","call_id":"c{i}","name":"f","arguments":""}}"#
                ),
            );
        }
        for i in 0..calls {
            s += &ev(
                "response.function_call_arguments.delta",
                format!(r#""output_index":{i},"item_id":"fc{i}","delta":"{{\"a\":1}}""#),
            );
        }
        for i in 0..calls {
            s += &ev(
                "response.output_item.done",
                format!(
                    r#""output_index":{i},"item":{{"type":"function_call","id":"fc{i}","call_id":"c{i}","name":"f","arguments":"{{\"a\":1}}"}}"#
                ),
            );
        }
        s.into_bytes()
    }
    fn ollama(calls: usize) -> Vec<u8> {
        let mut s = String::new();
        for i in 0..calls {
            s += &format!("{{\"model\":\"m\",\"message\":{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"function\":{{\"name\":\"f\",\"arguments\":{{\"a\":{i}}}}}}}]}},\"done\":false}}\n");
        }
        s.into_bytes()
    }
    let decode = |input: &[u8], provider: Provider| {
        let mut d = StreamDecoder::new(DecodeOptions::default().with_provider(provider));
        let mut out = Vec::new();
        for c in input.chunks(64) {
            d.feed(c, &mut out);
            out.clear();
        }
        d.finish(&mut out);
    };
    type Case = (&'static str, Provider, fn(usize) -> Vec<u8>);
    let cases: [Case; 5] = [
        ("openai, parallel calls", Provider::OpenAi, |n| {
            openai(n, true)
        }),
        ("openai, calls one after another", Provider::OpenAi, |n| {
            openai(n, false)
        }),
        ("anthropic, tool_use blocks", Provider::Anthropic, anthropic),
        (
            "responses, parallel function calls",
            Provider::Responses,
            responses,
        ),
        ("ollama, one call per line", Provider::Ollama, ollama),
    ];
    let mut over = Vec::new();
    for (name, provider, make) in cases {
        let (small, large) = (make(200), make(200 * GROWTH));
        // The streams are real ones: every call comes out.
        let events =
            toolstream::provider::decode(&small, &DecodeOptions::default().with_provider(provider));
        let ended = events
            .iter()
            .filter(|e| matches!(e, Event::ToolEnd { .. }))
            .count();
        assert_eq!(ended, 200, "{name}");
        let ratio = ratio(&small, &large, BOUND, |i| decode(i, provider));
        if std::env::var_os("LINEAR_PRINT").is_some() {
            eprintln!("{ratio:6.1} {name}");
        }
        if ratio > BOUND {
            over.push(format!(
                "{name}: {ratio:.0}x the time for {GROWTH}x the calls"
            ));
        }
    }
    assert!(over.is_empty(), "superlinear work:\n{}", over.join("\n"));
}
