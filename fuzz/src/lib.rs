//! The properties the fuzz targets assert, shared by every target and by
//! the test suites (`tests/common` includes this file with `#[path]`), so a
//! crash replays through exactly the assertions that found it
//! (`tests/fuzz_regressions.rs`), and the proptests and golden tests check
//! the very contracts the fuzzers do.
//!
//! Input layout: `content_split`, `json_repair` and `pythonic` read the
//! *split layout* (see [`split`]: a header byte, the chunk lengths it
//! announces, then the input proper). `sse`, `ndjson`, `provider` and
//! `limits` read one options byte first, then the split layout
//! ([`split_opt`]).
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;

use toolstream::frame::{FrameErrorKind, FrameLimits};
use toolstream::json::{Repairer, Status};
use toolstream::ndjson::NdjsonDecoder;
use toolstream::provider::{DecodeOptions, Provider, StreamDecoder};
use toolstream::sse::SseDecoder;
use toolstream::{Config, Event, Limits, Parsed, Parser, ToolCall};

/// Splits fuzzer bytes into (header-free rest, chunk boundaries in the rest).
///
/// `data[0]`:
/// * `0b00nn_nnnn`, `0b11nn_nnnn`: `n & 15` gap bytes follow; each is the
///   length of the next chunk (0 = an empty feed, skipped); the remainder is
///   one last chunk;
/// * `0b01xx_xxxx`: feed one byte at a time;
/// * `0b10kk_kkkk`: feed in chunks of `k + 1` bytes.
///
/// Boundaries are returned as offsets in the input (sorted, may repeat, may
/// be past the end: [`chunks`] clamps them).
pub fn split(data: &[u8]) -> (&[u8], Vec<usize>) {
    let Some((&h, rest)) = data.split_first() else {
        return (data, Vec::new());
    };
    match h >> 6 {
        1 => (rest, (1..rest.len()).collect()),
        2 => {
            let k = (h & 0x3f) as usize + 1;
            (
                rest,
                (1..)
                    .map(|i| i * k)
                    .take_while(|&s| s < rest.len())
                    .collect(),
            )
        }
        _ => {
            let n = ((h & 0x0f) as usize).min(rest.len());
            let (gaps, input) = rest.split_at(n);
            let mut at = 0;
            let splits = gaps
                .iter()
                .map(|&g| {
                    at += g as usize;
                    at
                })
                .collect();
            (input, splits)
        }
    }
}

/// The chunks of `input` cut at `splits` (empty chunks dropped).
pub fn chunks<'a>(input: &'a [u8], splits: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut last = 0;
    for &s in splits {
        let s = s.min(input.len());
        if s > last {
            out.push(&input[last..s]);
            last = s;
        }
    }
    if last < input.len() {
        out.push(&input[last..]);
    }
    out
}

/// Text, thinking and calls of an event list.
pub fn summary(events: &[Event]) -> (Vec<u8>, Vec<u8>, Vec<ToolCall>) {
    let mut text = Vec::new();
    let mut thinking = Vec::new();
    for e in events {
        match e {
            Event::Text { text: t, .. } => text.extend_from_slice(t),
            Event::Thinking { text: t, .. } => thinking.extend_from_slice(t),
            _ => {}
        }
    }
    (text, thinking, Parsed::from_events(events.to_vec()).calls)
}

fn assert_same_summary(input: &[u8], whole: &[Event], split: &[Event], splits: &[usize]) {
    let (a, b) = (summary(whole), summary(split));
    assert!(
        a.0 == b.0,
        "text differs whole vs split at {splits:?}: {:?} vs {:?} (input {:?})",
        String::from_utf8_lossy(&a.0),
        String::from_utf8_lossy(&b.0),
        String::from_utf8_lossy(input)
    );
    assert!(
        a.1 == b.1,
        "thinking differs whole vs split at {splits:?}: {:?} vs {:?} (input {:?})",
        String::from_utf8_lossy(&a.1),
        String::from_utf8_lossy(&b.1),
        String::from_utf8_lossy(input)
    );
    assert!(
        a.2 == b.2,
        "calls differ whole vs split at {splits:?}:\n{:#?}\nvs\n{:#?}\n(input {:?})",
        a.2,
        b.2,
        String::from_utf8_lossy(input)
    );
}

fn assert_json_object(args: &str) {
    let v: serde_json::Value =
        serde_json::from_str(args).unwrap_or_else(|e| panic!("arguments not JSON ({e}): {args:?}"));
    assert!(v.is_object(), "arguments not a JSON object: {args:?}");
}

/// The content parser's contracts on one event list: spans of the tiling
/// events cover `[0, len)` without gap or overlap, `Text` is exactly its
/// input bytes and `Thinking` lies inside its span, calls open/close in
/// order with indexes counting up from 0, deltas add up to the arguments,
/// which are a JSON object; the output is bounded
/// ([`check_amplification`]). Also the contract check of the test suites
/// (`tests/common`).
pub fn check_contracts(input: &[u8], events: &[Event]) {
    let mut pos = 0u64;
    for e in events.iter().filter(|e| e.is_tiling()) {
        let s = e.span();
        assert_eq!(s.start, pos, "gap or overlap before {e:?}");
        assert!(s.end >= s.start, "backwards span in {e:?}");
        assert!(s.end as usize <= input.len(), "span past the input: {e:?}");
        pos = s.end;
        let raw = &input[s.start as usize..s.end as usize];
        match e {
            Event::Text { text, .. } => assert_eq!(
                &text[..],
                raw,
                "Text differs from the input bytes of its span"
            ),
            Event::Thinking { text, .. } => assert!(
                text.is_empty() || memchr::memmem::find(raw, text).is_some(),
                "Thinking not inside its span: {e:?}"
            ),
            _ => {}
        }
    }
    assert_eq!(
        pos,
        input.len() as u64,
        "tiling spans do not cover the input"
    );
    let mut next = 0usize;
    let mut open: Option<(usize, Vec<u8>)> = None;
    for e in events {
        match e {
            Event::ToolStart { index, .. } => {
                assert!(open.is_none(), "ToolStart while a call is open");
                assert_eq!(*index, next, "call indexes must count up from 0");
                open = Some((*index, Vec::new()));
            }
            Event::ToolArgs { index, delta, .. } => {
                let (i, buf) = open.as_mut().expect("ToolArgs outside a call");
                assert_eq!(index, i, "ToolArgs for another call");
                buf.extend_from_slice(delta);
            }
            Event::ToolEnd { call, .. } => {
                let (i, buf) = open.take().expect("ToolEnd without ToolStart");
                assert_eq!(call.index, i, "ToolEnd for another call");
                assert!(
                    buf == call.arguments.as_bytes(),
                    "deltas {:?} do not add up to the arguments {:?}",
                    String::from_utf8_lossy(&buf),
                    call.arguments
                );
                assert_json_object(&call.arguments);
                for r in &call.repairs {
                    assert!(
                        r.offset <= input.len() as u64,
                        "repair {r:?} past the end of the input ({} bytes) in {call:?}",
                        input.len()
                    );
                }
                next += 1;
            }
            _ => {}
        }
    }
    assert!(open.is_none(), "a call was left open after finish");
    check_amplification(input, events);
}

/// Bounded output: what the events carry (text, reasoning, call names and
/// arguments) is at most 16 times the input, plus a constant (escapes and
/// repairs lengthen it by a bounded factor, never by one that grows with
/// the input).
pub fn check_amplification(input: &[u8], events: &[Event]) {
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
        "{out} bytes out of {} in",
        input.len()
    );
}

/// Feeds the content parser the chunks, then finishes.
pub fn parse_split(input: &[u8], splits: &[usize], cfg: &Config) -> Vec<Event> {
    let mut p = Parser::new(cfg.clone());
    let mut events = Vec::new();
    for c in chunks(input, splits) {
        p.feed(c, &mut events);
    }
    p.finish(&mut events);
    events
}

/// [`parse_split`] through [`Parser::feed_bytes`], whose events share the
/// chunks, instead of [`Parser::feed`].
pub fn parse_split_bytes(input: &[u8], splits: &[usize], cfg: &Config) -> Vec<Event> {
    let mut p = Parser::new(cfg.clone());
    let mut events = Vec::new();
    for c in chunks(input, splits) {
        p.feed_bytes(bytes::Bytes::copy_from_slice(c), &mut events);
    }
    p.finish(&mut events);
    events
}

/// Content parser: contracts hold whole and split, and both agree on text,
/// thinking and calls; [`Parser::feed_bytes`] gives the very events of
/// [`Parser::feed`].
pub fn check_content(input: &[u8], splits: &[usize], cfg: &Config) {
    let whole = parse_split(input, &[], cfg);
    check_contracts(input, &whole);
    let split = parse_split(input, splits, cfg);
    check_contracts(input, &split);
    assert_same_summary(input, &whole, &split, splits);
    assert_eq!(
        parse_split_bytes(input, splits, cfg),
        split,
        "feed_bytes and feed differ at {splits:?} for {:?}",
        String::from_utf8_lossy(input)
    );
}

/// One-shot repair through the streaming API, fed in chunks; mirrors
/// `toolstream::json::repair`. Returns (output, repairs, truncated) or `None`
/// when no value began.
pub fn repair_split(
    input: &[u8],
    splits: &[usize],
    limits: &Limits,
) -> Option<(Vec<u8>, Vec<toolstream::Repair>, bool)> {
    run_split(Repairer::with_limits(limits), input, splits)
}

/// `r` fed `input` split at `splits`, then finished: what it wrote, its
/// repairs and whether `finish` completed anything.
fn run_split(
    mut r: Repairer,
    input: &[u8],
    splits: &[usize],
) -> Option<(Vec<u8>, Vec<toolstream::Repair>, bool)> {
    let mut out = Vec::new();
    let mut done = false;
    let mut stopped = false;
    for c in chunks(input, splits) {
        let p = r.feed(c, &mut out);
        match p.status {
            Status::NeedMore => assert_eq!(p.consumed, c.len(), "NeedMore without consuming all"),
            Status::Done => {
                done = true;
                stopped = true;
            }
            _ => stopped = true,
        }
        if stopped {
            break;
        }
    }
    let truncated = if done { false } else { r.finish(&mut out) };
    if !r.has_begun() {
        return None;
    }
    Some((out, r.take_repairs(), truncated))
}

/// A sink that never takes input in bulk: the repairer reads everything on
/// its slow path, one token per step.
#[derive(Default)]
struct SlowSink(Vec<u8>);

impl toolstream::json::Sink for SlowSink {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn last_byte(&self) -> Option<u8> {
        self.0.last().copied()
    }
    fn step_by_step(&self) -> bool {
        true
    }
}

/// A sink that needs marks (as the call router does): what it sees, writes
/// joined between marks (their cuts follow the chunks). With `step`, the
/// repairer reads for it one token per step, else whole plain units.
#[derive(Default)]
struct MarkSink {
    seen: Vec<(String, u64)>,
    step: bool,
}

impl toolstream::json::Sink for MarkSink {
    fn write(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        match self.seen.last_mut() {
            Some((w, u64::MAX)) => w.push_str(&text),
            _ => self.seen.push((text.into_owned(), u64::MAX)),
        }
    }
    fn mark(&mut self, mark: toolstream::json::Mark<'_>, offset: u64) {
        self.seen.push((format!("{mark:?}"), offset));
    }
    fn step_by_step(&self) -> bool {
        self.step
    }
}

/// What a [`MarkSink`] saw of `input` split at `splits`, with the repairs,
/// the progress of every feed and whether `finish` completed anything.
type MarkRun = (
    Vec<(String, u64)>,
    Vec<toolstream::Repair>,
    Vec<(usize, Status)>,
    bool,
);

fn repair_marks(input: &[u8], splits: &[usize], step: bool, limits: &Limits) -> MarkRun {
    let mut r = Repairer::with_limits(limits);
    let mut sink = MarkSink {
        step,
        ..MarkSink::default()
    };
    let mut progress = Vec::new();
    for c in chunks(input, splits) {
        let p = r.feed(c, &mut sink);
        progress.push((p.consumed, p.status));
        if p.status != Status::NeedMore {
            break;
        }
    }
    let truncated = r.finish(&mut sink);
    (sink.seen, r.take_repairs(), progress, truncated)
}

/// [`repair_split`] on the slow path alone (see [`SlowSink`]).
fn repair_split_slow(
    input: &[u8],
    splits: &[usize],
    limits: &Limits,
) -> Option<(Vec<u8>, Vec<toolstream::Repair>, bool)> {
    let mut r = Repairer::with_limits(limits);
    let mut out = SlowSink::default();
    let mut done = false;
    for c in chunks(input, splits) {
        let p = r.feed(c, &mut out);
        if p.status != Status::NeedMore {
            done = p.status == Status::Done;
            break;
        }
    }
    let truncated = if done { false } else { r.finish(&mut out) };
    if !r.has_begun() {
        return None;
    }
    Some((out.0, r.take_repairs(), truncated))
}

/// The repairer's output for `input` is UTF-8 and JSON. (serde_json rejects
/// numbers beyond f64, `1e999`, which RFC 8259 allows: a limit of the
/// oracle, not invalid output.)
fn assert_repaired_json(out: &[u8], input: &[u8]) {
    let text = std::str::from_utf8(out).unwrap_or_else(|e| {
        panic!(
            "repaired output is not UTF-8 ({e}): {:?}",
            String::from_utf8_lossy(out)
        )
    });
    if let Err(e) = serde_json::from_str::<serde_json::Value>(text) {
        assert!(
            e.to_string().starts_with("number out of range"),
            "repaired output is not JSON ({e}): {text:?} from {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// JSON repairer: differential against serde_json, against its own slow
/// path (the fast path reads and rewrites whole units; it must write what
/// the slow path writes; the unit path, for sinks that need marks, must make
/// the slow path's writes and marks), plus chunk invariance.
pub fn check_json_repair(input: &[u8], splits: &[usize]) {
    let whole = toolstream::json::repair(input);
    // json::repair reads a document (`Repairer::document`): a key left with
    // no value at the end is kept with null there, dropped in arguments.
    let document = run_split(Repairer::new().document(true), input, &[]);
    assert_eq!(
        whole
            .as_ref()
            .map(|r| (r.json.as_bytes(), &r.repairs, r.truncated)),
        document.as_ref().map(|r| (&r.0[..], &r.1, r.2)),
        "json::repair and the streaming Repairer disagree"
    );
    let document_split = run_split(Repairer::new().document(true), input, splits);
    assert_same_run(
        &document,
        &document_split,
        &format!("document mode: whole vs split at {splits:?}"),
        input,
    );
    let streamed = repair_split(input, &[], &Limits::default());
    if let Some(r) = &whole {
        assert_repaired_json(r.json.as_bytes(), input);
    }
    if let Some(r) = &streamed {
        assert_repaired_json(&r.0, input);
    }
    if serde_json::from_slice::<serde_json::Value>(input).is_ok() {
        let r = whole
            .as_ref()
            .expect("valid JSON but repair found no value");
        assert!(
            r.json.as_bytes() == input.trim_ascii(),
            "valid JSON was changed: {:?} -> {:?}",
            String::from_utf8_lossy(input),
            r.json
        );
        assert!(
            r.repairs.is_empty(),
            "valid JSON {:?} reported repairs {:?}",
            String::from_utf8_lossy(input),
            r.repairs
        );
    }
    check_repair_paths(input, splits, &Limits::default(), &streamed);
}

/// The repairer under `limits` (`streamed`: its output fed whole): the fast
/// and slow paths write the same, the unit and slow paths make the same
/// writes and marks, and a split feed gives what the whole feed gave.
fn check_repair_paths(
    input: &[u8],
    splits: &[usize],
    limits: &Limits,
    streamed: &Option<(Vec<u8>, Vec<toolstream::Repair>, bool)>,
) {
    let slow = repair_split_slow(input, &[], limits);
    assert_same_run(streamed, &slow, "fast and slow paths", input);
    for cut in [&[][..], splits] {
        let units = repair_marks(input, cut, false, limits);
        let steps = repair_marks(input, cut, true, limits);
        assert!(
            units == steps,
            "unit and slow paths differ at {cut:?}: {units:?} vs {steps:?} (input {:?})",
            String::from_utf8_lossy(input)
        );
    }
    let split = repair_split(input, splits, limits);
    assert_same_run(
        streamed,
        &split,
        &format!("whole vs split at {splits:?}"),
        input,
    );
}

/// One repairer run (output, repairs, truncated), as [`run_split`] gives.
type RepairRun = Option<(Vec<u8>, Vec<toolstream::Repair>, bool)>;

/// Two repairer runs over `input` that must be the same (`what` names them).
fn assert_same_run(a: &RepairRun, b: &RepairRun, what: &str, input: &[u8]) {
    let show = |r: &RepairRun| {
        r.as_ref()
            .map(|r| (String::from_utf8_lossy(&r.0).into_owned(), r.1.clone(), r.2))
    };
    assert!(
        a == b,
        "{what} differ: {:?} vs {:?} (input {:?})",
        show(a),
        show(b),
        String::from_utf8_lossy(input)
    );
}

/// Limits chosen by an options byte, tight enough that fuzz inputs reach
/// them: bits 0-1 the token limit (4, 8, 16 or 64 bytes), bits 2-4 the
/// depth (1 to 8), bits 5-6 the argument size (16, 40, 200 or 4096 bytes),
/// bit 7 the held-back bytes (16 or 256); tags up to 32 bytes; as many
/// repairs listed as the depth limit (1 to 8).
pub fn limits_from(opt: u8) -> Limits {
    Limits {
        max_token_bytes: [4, 8, 16, 64][(opt & 3) as usize],
        max_depth: 1 + ((opt >> 2) & 7) as usize,
        max_args_bytes: [16, 40, 200, 4096][((opt >> 5) & 3) as usize],
        max_held_bytes: if opt & 0x80 == 0 { 16 } else { 256 },
        max_tag_bytes: 32,
        max_repairs: 1 + ((opt >> 2) & 7) as usize,
        ..Limits::default()
    }
}

/// Under tight limits: the repairer's output is valid JSON in UTF-8 and its
/// paths agree ([`check_repair_paths`]); the content parser keeps its
/// contracts and is chunk-invariant ([`check_content`]).
pub fn check_limits(input: &[u8], splits: &[usize], opt: u8) {
    let limits = limits_from(opt);
    check_repair_under(input, splits, &limits);
    check_content(input, splits, &Config::default().with_limits(limits));
}

/// The repairer under `limits`: its output is valid JSON in UTF-8 and its
/// paths agree ([`check_repair_paths`]), whole and split.
pub fn check_repair_under(input: &[u8], splits: &[usize], limits: &Limits) {
    let streamed = repair_split(input, &[], limits);
    if let Some((out, _, _)) = &streamed {
        assert_repaired_json(out, input);
    }
    check_repair_paths(input, splits, limits, &streamed);
}

/// One limit value from one fuzzer byte: its low three bits pick 0, 1,
/// `usize::MAX`, the default (`default`), or (4-7) a small value, the high
/// five bits times `scale`.
fn limit_byte(b: u8, default: usize, scale: usize) -> usize {
    match b & 7 {
        0 => 0,
        1 => 1,
        2 => usize::MAX,
        3 => default,
        _ => (b >> 3) as usize * scale,
    }
}

/// Limits drawn from the first [`LIMIT_BYTES`] bytes of `data`, each field
/// from one byte ([`limit_byte`]): any field may be 0, 1 or `usize::MAX`.
/// Returns the limits and the rest of `data`.
pub fn limits_any(data: &[u8]) -> (Limits, &[u8]) {
    let mut b = [3u8; LIMIT_BYTES];
    let n = data.len().min(LIMIT_BYTES);
    b[..n].copy_from_slice(&data[..n]);
    let d = Limits::default();
    let limits = Limits {
        max_depth: limit_byte(b[0], d.max_depth, 1),
        max_args_bytes: limit_byte(b[1], d.max_args_bytes, 8),
        max_held_bytes: limit_byte(b[2], d.max_held_bytes, 8),
        max_token_bytes: limit_byte(b[3], d.max_token_bytes, 2),
        max_tag_bytes: limit_byte(b[4], d.max_tag_bytes, 2),
        max_repairs: limit_byte(b[5], d.max_repairs, 1),
        max_input_bytes: limit_byte(b[6], d.max_input_bytes, 8),
    };
    (limits, &data[n..])
}

/// How many bytes [`limits_any`] reads.
pub const LIMIT_BYTES: usize = 7;

/// The `limits_any` target: limits drawn by [`limits_any`], then a split
/// layout. The repairer, the content parser (without and with tools) and
/// the provider decoder (auto-detected, content re-parsed, frames capped at
/// `max_args_bytes`) keep their properties under them.
pub fn check_limits_any(data: &[u8]) {
    let (limits, rest) = limits_any(data);
    let (input, splits) = split(rest);
    check_repair_under(input, &splits, &limits);
    let cfg = Config::default().with_limits(limits.clone());
    check_content(input, &splits, &cfg);
    check_content(input, &splits, &tools_config().with_limits(limits.clone()));
    let opts = DecodeOptions {
        config: cfg.clone(),
        frame_limits: FrameLimits {
            max_frame_bytes: limits.max_args_bytes,
        },
        reparse: Some(cfg),
        ..DecodeOptions::default()
    };
    check_provider_with(input, &splits, &opts);
}

/// Frame limit chosen by the options byte: 0 = default, else `opt * 4`.
pub fn frame_limits(opt: u8) -> FrameLimits {
    if opt == 0 {
        FrameLimits::default()
    } else {
        FrameLimits {
            max_frame_bytes: opt as usize * 4,
        }
    }
}

/// SSE framing: whole vs split give identical frames (spans included);
/// delivered fields fit in the limit; a `TooLarge` span is at most limit + 1.
pub fn check_sse(input: &[u8], splits: &[usize], opt: u8) {
    let limits = frame_limits(opt & 0x7f);
    let max = limits.max_frame_bytes;
    let eof = opt & 0x80 != 0;
    let run = |splits: &[usize]| {
        let mut d = SseDecoder::with_limits(limits.clone()).dispatch_at_eof(eof);
        let mut out = Vec::new();
        for c in chunks(input, splits) {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    };
    let whole = run(&[]);
    let split = run(splits);
    assert!(
        whole == split,
        "SSE frames differ whole vs split at {splits:?}:\n{whole:#?}\nvs\n{split:#?}"
    );
    let mut last_end = 0;
    for f in &whole {
        match f {
            Ok(e) => {
                // The limit bounds the frame's raw bytes. Invalid UTF-8 is
                // delivered as U+FFFD (3 bytes for each bad byte), so count
                // each replacement character as the one raw byte it may be.
                let text_len =
                    |s: &[u8]| s.len() - 2 * memchr::memmem::find_iter(s, "\u{FFFD}").count();
                let size = text_len(&e.data) + e.event.as_deref().map_or(0, text_len);
                assert!(
                    size <= max,
                    "SSE event of {size} raw bytes over the {max}-byte limit"
                );
                assert!(std::str::from_utf8(&e.data).is_ok(), "SSE data not UTF-8");
                assert!(
                    e.span.start >= last_end,
                    "SSE spans overlap or go backwards"
                );
                assert!(
                    e.span.end as usize <= input.len(),
                    "SSE span past the input"
                );
                last_end = e.span.end;
            }
            Err(err) => {
                if let FrameErrorKind::TooLarge { limit } = err.kind {
                    assert_eq!(limit, max);
                    assert!(
                        err.span.end - err.span.start <= max as u64 + 1,
                        "TooLarge span {} longer than limit + 1 ({max})",
                        err.span
                    );
                }
            }
        }
    }
}

/// NDJSON framing: whole vs split identical; every line fits in the limit,
/// holds no LF, is the input bytes at its span, and is not blank.
pub fn check_ndjson(input: &[u8], splits: &[usize], opt: u8) {
    let limits = frame_limits(opt);
    let max = limits.max_frame_bytes;
    let run = |splits: &[usize]| {
        let mut d = NdjsonDecoder::with_limits(limits.clone());
        let mut out = Vec::new();
        for c in chunks(input, splits) {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    };
    let whole = run(&[]);
    let split = run(splits);
    assert!(
        whole == split,
        "NDJSON lines differ whole vs split at {splits:?}:\n{whole:#?}\nvs\n{split:#?}"
    );
    let mut last_end = 0;
    for l in &whole {
        match l {
            Ok(l) => {
                assert!(
                    l.data.len() <= max,
                    "line of {} over the {max}-byte limit",
                    l.data.len()
                );
                assert!(!l.data.contains(&b'\n'), "line holds a LF");
                assert!(!l.data.trim_ascii().is_empty(), "blank line delivered");
                let (s, e) = (l.span.start as usize, l.span.end as usize);
                assert!(
                    s >= last_end && e <= input.len(),
                    "bad line span {}",
                    l.span
                );
                assert!(
                    input[s..e].starts_with(&l.data),
                    "line data is not the input at its span"
                );
                last_end = e;
            }
            Err(err) => {
                if let FrameErrorKind::TooLarge { limit } = err.kind {
                    assert_eq!(limit, max);
                    assert!(
                        err.span.end - err.span.start <= max as u64 + 1,
                        "TooLarge span {} longer than limit + 1 ({max})",
                        err.span
                    );
                }
            }
        }
    }
}

/// Per call (by index, calls may interleave): deltas add up to the final
/// arguments, which are a JSON object; no call ends twice or without a start.
pub fn check_call_deltas(events: &[Event]) {
    let mut open: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut ended: Vec<usize> = Vec::new();
    for e in events {
        match e {
            Event::ToolStart { index, .. } => {
                assert!(
                    !ended.contains(index),
                    "call {index} started after it ended"
                );
                assert!(
                    open.insert(*index, Vec::new()).is_none(),
                    "call {index} started twice"
                );
            }
            Event::ToolArgs { index, delta, .. } => open
                .get_mut(index)
                .unwrap_or_else(|| panic!("ToolArgs for call {index} that is not open"))
                .extend_from_slice(delta),
            Event::ToolEnd { call, .. } => {
                let buf = open
                    .remove(&call.index)
                    .unwrap_or_else(|| panic!("ToolEnd for call {} not open", call.index));
                assert!(
                    buf == call.arguments.as_bytes(),
                    "call {}: deltas {:?} do not add up to the arguments {:?}",
                    call.index,
                    String::from_utf8_lossy(&buf),
                    call.arguments
                );
                assert_json_object(&call.arguments);
                ended.push(call.index);
            }
            _ => {}
        }
    }
    assert!(
        open.is_empty(),
        "calls left open after finish: {:?}",
        open.keys()
    );
}

/// Decode options from the options byte: `opt % 8` picks a provider
/// (7 = auto-detect), bit 3 turns content re-parsing on.
pub fn decode_options(opt: u8) -> DecodeOptions {
    let mut o = DecodeOptions::default();
    if let Some(&p) = Provider::ALL.get((opt % 8) as usize) {
        o = o.with_provider(p);
    }
    if opt & 0x08 != 0 {
        o = o.with_reparse(Config::default());
    }
    o
}

/// Decodes a provider stream fed in chunks.
pub fn decode_split(input: &[u8], splits: &[usize], opts: &DecodeOptions) -> Vec<Event> {
    let mut d = StreamDecoder::new(opts.clone());
    let mut out = Vec::new();
    for c in chunks(input, splits) {
        d.feed(c, &mut out);
    }
    d.finish(&mut out);
    out
}

/// Provider decoder: whole vs split give the same text, thinking and calls;
/// in both, every call's deltas add up to JSON-object arguments.
pub fn check_provider(input: &[u8], splits: &[usize], opt: u8) {
    check_provider_with(input, splits, &decode_options(opt));
}

/// [`check_provider`] with the given options.
pub fn check_provider_with(input: &[u8], splits: &[usize], opts: &DecodeOptions) {
    let whole = decode_split(input, &[], opts);
    check_call_deltas(&whole);
    check_amplification(input, &whole);
    let split = decode_split(input, splits, opts);
    check_call_deltas(&split);
    check_amplification(input, &split);
    assert_same_summary(input, &whole, &split, splits);
}

/// Auto-detection with tools offered: names matched against them, inferred
/// from their schemas (a call with arguments and no name), values typed.
pub fn tools_config() -> Config {
    let tools = toolstream::Tools::from_json(
        r#"[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}},
            {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}}]"#,
    )
    .expect("fuzz tools");
    Config::default().with_tools(tools)
}

/// The content parser restricted to the pythonic dialect.
pub fn pythonic_config() -> Config {
    // Offered tools reach the schema-driven paths too: positional names,
    // float typing, a call of an offered tool after a list.
    let tools = toolstream::Tools::from_json(
        r#"[{"name": "a", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "integer"}}}},
            {"name": "b", "parameters": {"type": "object", "properties": {"s": {"type": "string"}, "d": {"type": "dict"}}}},
            {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "double"}, "b": {"type": "string"}}}}]"#,
    )
    .expect("fuzz tools");
    Config::default()
        .with_dialects(vec![toolstream::Dialect::Pythonic])
        .with_tools(tools)
}

/// Options byte and input of a stream target's data (after [`split`]'s header).
pub fn split_opt(data: &[u8]) -> (u8, &[u8], Vec<usize>) {
    let (&opt, rest) = match data.split_first() {
        Some(x) => x,
        None => return (0, data, Vec::new()),
    };
    let (input, splits) = split(rest);
    (opt, input, splits)
}
