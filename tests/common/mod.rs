//! Shared checks of the parser's contracts, used by every test suite.
#![allow(dead_code, unreachable_pub)]

use toolstream::{Config, Event, Parsed, Parser, RepairKind, ToolCall};

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

/// Sorted, distinct split offsets inside an input of `len` bytes, from
/// arbitrary `cuts` (as a property test draws them).
pub(crate) fn splits_from(cuts: &[usize], len: usize) -> Vec<usize> {
    let mut splits: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    splits.sort_unstable();
    splits.dedup();
    splits
}

/// The streamed runs a property compares with the whole input: split at
/// `splits` (fed as slices and as `Bytes`), and in 1, 2, 3, 4 and 7-byte
/// chunks — each with how it was fed.
pub(crate) fn streamed_runs(
    input: &[u8],
    splits: &[usize],
    cfg: &Config,
) -> Vec<(&'static str, Vec<Event>)> {
    let mut runs = vec![
        ("random", run_split(input, splits, cfg)),
        ("random, feed_bytes", run_split_bytes(input, splits, cfg)),
    ];
    for n in [1, 2, 3, 4, 7] {
        runs.push(("chunks", run_chunked(input, n, cfg)));
    }
    runs
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

/// The kinds of a call's repairs, in order.
pub(crate) fn kinds(c: &ToolCall) -> Vec<RepairKind> {
    c.repairs.iter().map(|r| r.kind).collect()
}

/// Calls without anything that may legitimately depend on chunking.
pub(crate) fn calls(events: &[Event]) -> Vec<ToolCall> {
    Parsed::from_events(events.to_vec()).calls
}

/// The lookup of `../shared/` (skipped with a message when absent).
pub(crate) mod shared;

// The contract checks are the fuzz targets' own (one definition of each
// contract, whichever harness finds a violation).
#[path = "../../fuzz/src/lib.rs"]
pub(crate) mod fuzz_checks;
pub(crate) use fuzz_checks::{check_contracts, summary};

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
