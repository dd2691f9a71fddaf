//! Property: string arguments streamed in small chunks — where a block takes
//! a chunk of plain string content whole (`Block::plain_chunk`: pythonic
//! calls) instead of reading it byte by byte — give the calls, text and
//! repairs of the whole input under every split, whatever the string holds
//! (quotes of either kind, backslashes, parentheses, line breaks, non-ASCII,
//! DEL) and whatever kind of string it is (single, double, triple-quoted,
//! raw, a dict key, inside a list), with tight limits too — and every
//! contract holds.

mod common;

use common::{cases, check_contracts, run_chunked, run_split, run_split_bytes, summary};
use proptest::prelude::*;
use toolstream::{Config, Limits};

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

/// One or two pythonic calls, prose around them, in a list or bare.
fn input() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((value(), value()), 1..3),
        any::<bool>(),
    )
        .prop_map(|(calls, list)| {
            let calls: Vec<String> = calls
                .iter()
                .map(|(a, b)| format!("write_file(path={a}, content={b}, n=3)"))
                .collect();
            let body = if list {
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
        let mut splits: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        splits.sort_unstable();
        splits.dedup();
        for cfg in configs() {
            let whole = run_split(&input, &[], &cfg);
            check_contracts(&input, &whole);
            let expect = summary(&whole);
            let mut runs = vec![
                ("random", run_split(&input, &splits, &cfg)),
                ("random, feed_bytes", run_split_bytes(&input, &splits, &cfg)),
            ];
            for n in [1, 2, 3, 4, 7] {
                runs.push(("chunks", run_chunked(&input, n, &cfg)));
            }
            for (how, events) in runs {
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
