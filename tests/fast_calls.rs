//! Property: the fast paths for well-formed call objects
//! (`src/dialect/fastcall.rs`: one read whole, and the streaming path that
//! reads one arriving in pieces — its arguments' chunks taken over by the
//! parser's lane where it can be armed — and hands it to the repairer,
//! replayed, at anything it does not accept) and the repairer alone give the same
//! text, thinking, markup, diagnostics and calls (arguments, names, ids,
//! repairs, truncation, spans), in the same feeds, for well-formed calls
//! and for slightly broken ones, whole and at every split; and each
//! call's `ToolArgs` deltas add up to its final arguments either way.
//! (Where the deltas are cut, and in which feed a call starts, may
//! differ: the streaming path hands out bytes as soon as they are safe.)

use proptest::prelude::*;
use toolstream::{Config, Dialect, Event, Parser};

/// The events of `input` fed in the pieces `splits` cuts it into, each
/// feed's events followed by a marker (so that which feed emitted what is
/// compared too), with the fast path on or off. `ToolStart` and
/// `ToolArgs` are checked here (a start before its arguments, deltas that
/// add up to the `ToolEnd`'s arguments, the start's id and name those of
/// the end) and left out of the list.
fn run(input: &[u8], splits: &[usize], cfg: &Config, fast: bool) -> Vec<String> {
    let mut p = Parser::new(cfg.clone().with_repairer_only(!fast));
    let mut out = Vec::new();
    let mut evs: Vec<Event> = Vec::new();
    let mut calls: std::collections::HashMap<usize, (String, String, Vec<u8>)> =
        std::collections::HashMap::new();
    let mut take = |evs: &mut Vec<Event>, out: &mut Vec<String>| {
        for e in evs.drain(..) {
            match &e {
                Event::ToolStart {
                    index, id, name, ..
                } => {
                    let old = calls.insert(*index, (id.to_string(), name.to_string(), Vec::new()));
                    assert!(old.is_none(), "call {index} started twice");
                }
                Event::ToolArgs { index, delta, .. } => {
                    let c = calls.get_mut(index).expect("arguments before the start");
                    c.2.extend_from_slice(delta.as_bytes());
                }
                Event::ToolEnd { call, .. } => {
                    let c = calls.get(&call.index).expect("an end without a start");
                    assert_eq!(
                        String::from_utf8_lossy(&c.2),
                        call.arguments,
                        "deltas add up (fast path {fast})"
                    );
                    assert_eq!((c.0.as_str(), c.1.as_str()), (&*call.id, &*call.name));
                    out.push(format!("{e:?}"));
                }
                _ => out.push(format!("{e:?}")),
            }
        }
    };
    let mut at = 0;
    for &cut in splits.iter().chain(std::iter::once(&input.len())) {
        p.feed(&input[at..cut], &mut evs);
        take(&mut evs, &mut out);
        out.push(format!("-- feed to {cut}"));
        at = cut;
    }
    p.finish(&mut evs);
    take(&mut evs, &mut out);
    out
}

fn configs() -> Vec<Config> {
    let tools = toolstream::Tools::from_value(&serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}}
    ]))
    .expect("tools");
    // Tight limits too (as the fuzz targets draw them: tokens of 4-64
    // bytes, depth 1-8, arguments of 16-200 bytes, 16 or 256 held bytes).
    let tight = |token, depth, args, held| {
        Config::default().with_limits(toolstream::Limits {
            max_token_bytes: token,
            max_depth: depth,
            max_args_bytes: args,
            max_held_bytes: held,
            max_tag_bytes: 32,
            max_repairs: depth,
            ..toolstream::Limits::default()
        })
    };
    vec![
        tight(64, 1, 4096, 256),
        tight(64, 2, 4096, 256),
        tight(64, 3, 200, 256),
        tight(16, 8, 200, 256),
        // (Below the repairer's own floor of 16 bytes a token.)
        tight(4, 8, 4096, 256),
        tight(64, 8, 40, 256),
        tight(64, 8, 4096, 16),
        Config::default().with_dialects(vec![Dialect::Hermes]),
        Config::default(),
        Config::default()
            .with_dialects(vec![Dialect::Hermes])
            .with_tools(tools),
    ]
}

/// Whole, every cut into two pieces, and some chunk sizes: the same
/// text and calls with the fast paths on and off.
fn same_both_ways(input: &[u8]) -> Result<(), TestCaseError> {
    let mut plans: Vec<Vec<usize>> = vec![vec![]];
    plans.extend((1..input.len()).map(|k| vec![k]));
    for n in [1usize, 3, 7, 16, 64] {
        plans.push((1..input.len().div_ceil(n)).map(|k| k * n).collect());
    }
    for cfg in configs() {
        for splits in &plans {
            let slow = run(input, splits, &cfg, false);
            let fast = run(input, splits, &cfg, true);
            prop_assert_eq!(
                &fast,
                &slow,
                "input {:?} split at {:?}",
                String::from_utf8_lossy(input),
                splits
            );
        }
    }
    Ok(())
}

fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "", "", " ", " ", " ", "\n", "  ", "\t", "\r\n", "\n\n", "\n  ",
    ])
}

fn string_lit() -> impl Strategy<Value = String> {
    // Mostly what a well-formed string holds; now and then what the fast
    // path must refuse (a raw control byte, a lone surrogate, a bad escape).
    let piece = prop_oneof![
        6 => prop::sample::select(vec![
            "a", "Paris 0", " ", "é", "日本", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\t",
            "\\u00e9", "\\u0000", "\\ud83d\\ude00", "<", "</tool_call>", "{", "}", "[", ",",
            ":", "'", "null",
        ]),
        1 => prop::sample::select(vec!["\t", "\n", "\\x", "\\ud83d"]),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|v| format!("\"{}\"", v.concat()))
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => string_lit(),
        3 => prop::sample::select(vec![
            "0", "-1", "2.5", "1e5", "1E+2", "-0.0e-1", "true", "false", "null",
        ])
        .prop_map(String::from),
        1 => prop::sample::select(vec![
            "12345678901234567890", "1e400", "007", "1.", "tru", "None", ".5", "-",
        ])
        .prop_map(String::from),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "\"city\"",
        "\"unit\"",
        "\"days\"",
        "\"arguments\"",
        "\"input\"",
        "\"a\\u0062\"",
        "\"\"",
        "\"é\"",
        "\"type\"",
        "city",
        "'q'",
    ])
    .prop_map(String::from)
}

fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            (prop::collection::vec((inner.clone(), ws()), 0..4), ws()).prop_map(|(items, w)| {
                let body: Vec<String> = items.iter().map(|(v, w)| format!("{w}{v}")).collect();
                format!("[{}{w}]", body.join(","))
            }),
            (prop::collection::vec((key(), ws(), inner), 0..4), ws()).prop_map(|(items, w)| {
                let body: Vec<String> = items
                    .iter()
                    .map(|(k, w, v)| format!("{w}{k}:{w}{v}"))
                    .collect();
                format!("{{{}{w}}}", body.join(","))
            }),
        ]
    })
}

/// An arguments object (mostly), a name, an envelope in either key order.
fn call() -> impl Strategy<Value = String> {
    let args = prop_oneof![
        4 => (prop::collection::vec((key(), ws(), value()), 0..4), ws()).prop_map(|(items, w)| {
            let body: Vec<String> = items.iter().map(|(k, w, v)| format!("{w}{k}:{w}{v}")).collect();
            format!("{{{}{w}}}", body.join(","))
        }),
        1 => value(),
    ];
    let name = prop::sample::select(vec![
        "\"get_weather\"",
        "\"get_weather\"",
        "\"f\"",
        "\"a.b-c_9\"",
        "\" f\"",
        "\"\"",
        "\"f g\"",
        "\"名前\"",
        "\"f\\\"\"",
        "null",
        "\"functions.get_weather\"",
    ]);
    (args, name, ws(), ws(), any::<u8>()).prop_map(|(args, name, w1, w2, shape)| match shape % 6 {
        0..=2 => format!("{{{w1}\"name\":{w2}{name},{w1}\"arguments\":{w2}{args}{w1}}}"),
        3 => format!("{{\"arguments\": {args},{w1}\"name\": {name}{w2}}}"),
        4 => format!("{{\"id\": \"c1\", \"name\": {name}, \"arguments\": {args}}}"),
        _ => format!("{{\"name\": {name}, \"parameters\": {args}}}"),
    })
}

/// Calls in a reply: prose, tags, one or two calls, sometimes two values
/// in one block, a missing closing tag, or cut short.
fn reply() -> impl Strategy<Value = Vec<u8>> {
    (call(), call(), ws(), any::<u8>(), any::<usize>()).prop_map(|(a, b, w, shape, cut)| {
        let s = match shape % 6 {
            0 => format!("Let me check.\n<tool_call>\n{a}\n</tool_call>"),
            1 => format!("<tool_call>{w}{a}{w}</tool_call>\n<tool_call>\n{b}\n</tool_call> done"),
            2 => format!("x <tool_call>\n{a}\n{b}\n</tool_call>"),
            3 => format!("<tool_call>\n{a}"),
            4 => format!("<tool_call>\n{a}\n</tool_call>\n\n```json\n{b}\n```\n"),
            _ => {
                let s = format!("ok <tool_call>\n{a}\n</tool_call>");
                let mut k = cut % (s.len() + 1);
                while !s.is_char_boundary(k) {
                    k -= 1;
                }
                s[..k].to_string()
            }
        };
        s.into_bytes()
    })
}

/// One byte of `input` replaced, dropped or doubled.
fn broken() -> impl Strategy<Value = Vec<u8>> {
    (reply(), any::<usize>(), any::<u8>(), 0u8..3).prop_map(|(mut s, at, b, how)| {
        if !s.is_empty() {
            let at = at % s.len();
            match how {
                0 => {
                    let bytes = b"{}[]\",:\\ a0\n<";
                    s[at] = bytes[b as usize % bytes.len()];
                }
                1 => {
                    s.remove(at);
                }
                _ => s.insert(at, s[at]),
            }
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)
    ))]

    #[test]
    fn well_formed_calls_same_events(input in reply()) {
        same_both_ways(&input)?;
    }

    #[test]
    fn broken_calls_same_events(input in broken()) {
        same_both_ways(&input)?;
    }
}

// ----- Long values (#48): longer than the repairer's 64 KB pieces ----------

/// The repairer's piece (`json::PIECE`): a long value read whole is fed to
/// it in pieces of this many bytes from its `{`, with a delta after each.
const PIECE: usize = 64 << 10;

/// A Hermes call whose `content` argument is `before` + `filler` + `at` +
/// `after`, sized so that the first piece ends `d` bytes into `at`, and the
/// value is `pieces` pieces long or so.
fn long_call(at: &str, d: usize, after: &str, pieces: usize) -> Vec<u8> {
    let head = r#"{"name": "write_file", "arguments": {"path": "/tmp/x", "content": ""#;
    let fill = "He said \\\"ship it\\\"\\tthen ran C:\\\\tools — naïve café ✓ ";
    let mut v = head.to_string();
    // Up to the piece end, less `d`: filler, then ASCII to the byte.
    while v.len() + fill.len() < PIECE - d {
        v.push_str(fill);
    }
    while v.len() < PIECE - d {
        v.push('x');
    }
    v.push_str(at);
    v.push_str(after);
    while v.len() + fill.len() < pieces * PIECE + 1000 {
        v.push_str(fill);
    }
    v.push_str("\"}}");
    format!("Writing it.\n<tool_call>\n{v}\n</tool_call>\nDone.").into_bytes()
}

/// Fast path on and off: the same events, whole and at a few splits (near
/// the piece end, inside the value, in 4 KB and 64 KB chunks).
fn same_long(input: &[u8], cfgs: &[Config]) {
    let value_at = input.iter().position(|&b| b == b'{').expect("a value");
    let mut plans: Vec<Vec<usize>> = vec![vec![]];
    for cut in [
        value_at + 1,
        value_at + PIECE - 3,
        value_at + PIECE + 5,
        input.len() - 20,
    ] {
        if cut < input.len() {
            plans.push(vec![cut]);
        }
    }
    for n in [4096usize, PIECE] {
        plans.push((1..input.len().div_ceil(n)).map(|k| k * n).collect());
    }
    for cfg in cfgs {
        for splits in &plans {
            let slow = run(input, splits, cfg, false);
            let fast = run(input, splits, cfg, true);
            if fast != slow {
                let at = fast.iter().zip(&slow).position(|(a, b)| a != b);
                let show = |v: &[String]| {
                    at.and_then(|k| v.get(k))
                        .map(|e| e.chars().take(300).collect::<String>())
                };
                panic!(
                    "{} events vs {} (first difference at {at:?}: fast {:?} slow {:?}), split at {splits:?}, limits {:?}",
                    fast.len(),
                    slow.len(),
                    show(&fast),
                    show(&slow),
                    cfg.limits
                );
            }
        }
    }
}

fn long_configs() -> Vec<Config> {
    vec![
        Config::default().with_dialects(vec![Dialect::Hermes]),
        Config::default(),
    ]
}

/// The first piece ends at every byte of escapes, characters of 2-4 bytes,
/// a `,` and spaces (stashed, or too long to be), a backslash pair, and
/// past the string into the structure after it.
#[test]
fn long_values_every_piece_end() {
    let spots = [
        "ab\\n\\u00e9\\ud83d\\ude00é日😀\\\\\\\"\\/\\t",
        "x, y,  z,   w ,",
        "x,                                        y",
        "end\", \"n\": -12.5e3, \"b\": [true, null, {\"k\": \"v\"}], \"t\": \"go on",
        "end\",\n    \"k2\": \"go on",
    ];
    for at in spots {
        for d in 0..at.len() + 2 {
            same_long(&long_call(at, d, "", 2), &long_configs());
        }
    }
}

/// Values of several pieces, each piece end inside the string or not.
#[test]
fn long_values_many_pieces() {
    for pieces in [3, 5] {
        same_long(&long_call("é", 1, "", pieces), &long_configs());
        same_long(&long_call(", ", 0, "", pieces), &long_configs());
    }
}

/// A bad byte late in a long value: the fast path refuses it there and the
/// repairer reads it from its start (same events), near its end.
#[test]
fn long_values_failing_late() {
    for bad in [
        "\u{1}",
        "\\x",
        "\\ud83d",
        "\"",
        "\", \"name\": \"g",
        "\"}, \"id\": \"1",
    ] {
        let ok = long_call("x", 10, "", 2);
        let s = String::from_utf8(ok).expect("UTF-8");
        let k = s.rfind("\"}}").expect("the value's end") - 1;
        let broken = format!("{}{bad}{}", &s[..k], &s[k..]);
        same_long(broken.as_bytes(), &long_configs());
    }
    // Invalid UTF-8 near the end.
    let mut v = long_call("x", 10, "", 2);
    let k = v.len() - 40;
    v[k] = 0xFF;
    same_long(&v, &long_configs());
    let mut v = long_call("x", 10, "", 2);
    let k = v.len() - 40;
    v.splice(k..k, [0xE2, 0x82]);
    same_long(&v, &long_configs());
}

/// Long values at each limit: arguments at `max_args_bytes` and either
/// side of it, the value at `max_held_bytes` and either side, keys and
/// blank runs at a quarter of `max_token_bytes` and either side.
#[test]
fn long_values_at_the_limits() {
    let input = long_call("x", 5, "", 2);
    let s = std::str::from_utf8(&input).expect("UTF-8");
    let v0 = s.find('{').expect("value");
    let v1 = s.rfind('}').expect("end") + 1;
    let a0 = s.find("{\"path\"").expect("args");
    let args = v1 - 1 - a0;
    let with = |f: &dyn Fn(&mut toolstream::Limits)| {
        let mut l = toolstream::Limits::default();
        f(&mut l);
        Config::default()
            .with_dialects(vec![Dialect::Hermes])
            .with_limits(l)
    };
    let mut cfgs = Vec::new();
    for d in [-1isize, 0, 1] {
        let n = (args as isize + d) as usize;
        cfgs.push(with(&|l| l.max_args_bytes = n));
        let n = ((v1 - v0) as isize + d) as usize;
        cfgs.push(with(&|l| l.max_held_bytes = n));
    }
    same_long(&input, &cfgs);
    // Keys and blanks near a quarter of a 1 KB token limit.
    let tight = [with(&|l| l.max_token_bytes = 1024)];
    for n in [253usize, 254, 255, 256, 257] {
        let key = "k".repeat(n);
        let pad = " ".repeat(n);
        for at in [
            format!("x\", \"{key}\": 1, \"t\": \"more"),
            format!("x\",{pad}\"t\":{pad}[1,{pad}2]{pad}, \"u\": \"more"),
        ] {
            let input = long_call("y", 30, &at, 2);
            same_long(&input, &tight);
            same_long(&input, &long_configs());
        }
    }
}
