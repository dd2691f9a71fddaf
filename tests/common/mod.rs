//! Shared checks of the parser's contracts, used by every test suite.
#![allow(dead_code, unreachable_pub)]

use toolstream::{Config, Event, Parsed, Parser, ToolCall};

/// `PROPTEST_CASES` overrides the default number of cases (for long runs).
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The non-empty pieces of `0..len` cut at `splits` (sorted offsets).
fn pieces(len: usize, splits: &[usize]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let ends = splits
        .iter()
        .map(move |&s| s.min(len))
        .chain(std::iter::once(len));
    ends.scan(0, |last, end| {
        let piece = *last..end.max(*last);
        *last = piece.end;
        Some(piece)
    })
    .filter(|r| !r.is_empty())
}

/// Feeds `input` split at `splits` (sorted offsets), returns the events.
pub(crate) fn run_split(input: &[u8], splits: &[usize], cfg: &Config) -> Vec<Event> {
    let mut p = Parser::new(cfg.clone());
    let mut events = Vec::new();
    for r in pieces(input.len(), splits) {
        p.feed(&input[r], &mut events);
    }
    p.finish(&mut events);
    events
}

/// [`run_split`] through [`Parser::feed_bytes`] (events that share the
/// chunks) instead of [`Parser::feed`].
pub(crate) fn run_split_bytes(input: &[u8], splits: &[usize], cfg: &Config) -> Vec<Event> {
    let input = bytes::Bytes::copy_from_slice(input);
    let mut p = Parser::new(cfg.clone());
    let mut events = Vec::new();
    for r in pieces(input.len(), splits) {
        p.feed_bytes(input.slice(r), &mut events);
    }
    p.finish(&mut events);
    events
}

/// Feeds `input` in `n`-byte chunks.
pub(crate) fn run_chunked(input: &[u8], n: usize, cfg: &Config) -> Vec<Event> {
    let splits: Vec<usize> = (1..)
        .map(|k| k * n.max(1))
        .take_while(|&s| s < input.len())
        .collect();
    run_split(input, &splits, cfg)
}

/// Calls without anything that may legitimately depend on chunking.
pub(crate) fn calls(events: &[Event]) -> Vec<ToolCall> {
    Parsed::from_events(events.to_vec()).calls
}

/// (text, thinking, calls).
pub(crate) fn summary(events: &[Event]) -> (Vec<u8>, Vec<u8>, Vec<ToolCall>) {
    let mut text = Vec::new();
    let mut thinking = Vec::new();
    for e in events {
        match e {
            Event::Text { text: t, .. } => text.extend_from_slice(t),
            Event::Thinking { text: t, .. } => thinking.extend_from_slice(t),
            _ => {}
        }
    }
    (text, thinking, calls(events))
}

/// Asserts the lossless, deltas-add-up and ordering contracts.
pub(crate) fn check_contracts(input: &[u8], events: &[Event]) {
    // Lossless: Text/Thinking/ToolEnd spans tile [0, len).
    let mut pos = 0u64;
    for e in events.iter().filter(|e| e.is_tiling()) {
        let s = e.span();
        assert_eq!(
            s.start,
            pos,
            "gap or overlap before {e:?} in {:?}",
            String::from_utf8_lossy(input)
        );
        assert!(s.end >= s.start);
        pos = s.end;
        let raw = &input[s.start as usize..s.end as usize];
        match e {
            Event::Text { text, .. } => assert_eq!(&text[..], raw, "text differs from its span"),
            Event::Thinking { text, .. } => {
                assert!(
                    text.is_empty() || memchr::memmem::find(raw, text).is_some(),
                    "thinking not inside its span"
                );
            }
            _ => {}
        }
    }
    assert_eq!(
        pos,
        input.len() as u64,
        "spans do not cover the input {:?}",
        String::from_utf8_lossy(input)
    );
    // Calls: start, deltas, end; deltas add up to valid JSON object arguments.
    let mut next_index = 0;
    let mut open: Option<(usize, Vec<u8>)> = None;
    for e in events {
        match e {
            Event::ToolStart { index, .. } => {
                assert!(open.is_none(), "ToolStart while a call is open");
                assert_eq!(*index, next_index, "call indexes must count up");
                open = Some((*index, Vec::new()));
            }
            Event::ToolArgs { index, delta, .. } => {
                let (i, buf) = open.as_mut().expect("ToolArgs outside a call");
                assert_eq!(index, i);
                buf.extend_from_slice(delta);
            }
            Event::ToolEnd { call, .. } => {
                let (i, buf) = open.take().expect("ToolEnd without ToolStart");
                assert_eq!(call.index, i);
                assert_eq!(
                    String::from_utf8_lossy(&buf),
                    call.arguments,
                    "deltas do not add up to the arguments"
                );
                let v: serde_json::Value = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|e| panic!("arguments not JSON ({e}): {}", call.arguments));
                assert!(v.is_object(), "arguments not an object: {}", call.arguments);
                next_index += 1;
            }
            _ => {}
        }
    }
    assert!(open.is_none(), "a call was left open");
    check_amplification(input, events);
}

/// Bounded output: what the events carry (text, reasoning, call names and
/// arguments) is at most 16 times the input, plus a constant. Escaping and
/// repairs make it longer (6 bytes for a control character, `null` for a
/// missing value: 6.3 times at most over the fuzz corpora), never by a
/// factor that grows with the input (a pythonic key nesting dicts once
/// doubled at each level: 2 MB of arguments from 80 bytes).
pub(crate) fn check_amplification(input: &[u8], events: &[Event]) {
    let out: usize = events
        .iter()
        .map(|e| match e {
            Event::Text { text, .. } | Event::Thinking { text, .. } => text.len(),
            Event::ToolEnd { call, .. } => call.name.len() + call.arguments.len(),
            _ => 0,
        })
        .sum();
    assert!(
        out <= 16 * input.len() + 256,
        "{out} bytes out of {} in: {:?}",
        input.len(),
        String::from_utf8_lossy(&input[..input.len().min(200)])
    );
}

/// Runs whole, 1-byte, 3-byte and 7-byte chunkings; checks contracts and
/// that all agree; returns the whole-input result.
pub(crate) fn check_all(input: &[u8], cfg: &Config) -> Parsed {
    let whole = run_split(input, &[], cfg);
    check_contracts(input, &whole);
    let want = summary(&whole);
    for n in [1, 2, 3, 7, 64] {
        let ev = run_chunked(input, n, cfg);
        check_contracts(input, &ev);
        let got = summary(&ev);
        assert_eq!(
            (
                String::from_utf8_lossy(&got.0),
                String::from_utf8_lossy(&got.1),
                &got.2
            ),
            (
                String::from_utf8_lossy(&want.0),
                String::from_utf8_lossy(&want.1),
                &want.2
            ),
            "chunk size {n} differs for {:?}",
            String::from_utf8_lossy(input)
        );
    }
    Parsed::from_events(whole)
}
