//! Allocations on the warm hot path of the content parser, counted with a
//! counting global allocator (`stats_alloc`), the way simd-json tests its
//! own: after a warm-up, feeding more `Bytes` chunks of the same kind must
//! not allocate per chunk.
//!
//! * prose (no call): every chunk becomes a zero-copy `Text` slice;
//! * the body of a long JSON string argument inside a Hermes call: every
//!   chunk becomes a `ToolArgs` delta;
//! * the body of a long XML parameter (Qwen3-Coder): same, JSON-escaped;
//! * the same string in the JSON arguments of a special-token dialect
//!   (DeepSeek V3.1) and in a pythonic call.
//!
//! The event buffer is reused (cleared) between chunks, as the push API
//! intends. Run with `--nocapture` to see the counts. None of them
//! may allocate per chunk: a short delta is held inline in its event, and
//! longer ones are cut from one reusable buffer whose space comes back once
//! the consumer drops them (the ceiling below is the few regrowths that
//! buffer may need while warming). A consumer that keeps every event does
//! not make small chunks allocate either (`kept_events_do_not_allocate`).

use std::alloc::System;

use bytes::Bytes;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use toolstream::{Config, Event, Parser};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PROSE: &str =
    "The quick brown fox jumps over the lazy dog, and it was a bright cold day in April. ";

/// Feeds `warm` then `hot` (in `chunk`-byte `Bytes` pieces) and returns
/// (chunks fed while counting, allocations + reallocations while counting,
/// events seen while counting).
fn hot_path(warm: &[u8], hot: &Bytes, chunk: usize) -> (usize, usize, usize) {
    let mut p = Parser::new(Config::default());
    let mut events: Vec<Event> = Vec::with_capacity(64);
    p.feed_bytes(Bytes::copy_from_slice(warm), &mut events);
    // One warm round of the hot input sizes every reusable buffer.
    let half = hot.len() / 2;
    let mut i = 0;
    while i < half {
        let end = (i + chunk).min(half);
        p.feed_bytes(hot.slice(i..end), &mut events);
        events.clear();
        i = end;
    }
    let region = Region::new(GLOBAL);
    let mut chunks = 0;
    let mut seen = 0;
    while i < hot.len() {
        let end = (i + chunk).min(hot.len());
        p.feed_bytes(hot.slice(i..end), &mut events);
        seen += events.len();
        events.clear();
        chunks += 1;
        i = end;
    }
    let stats = region.change();
    drop(p);
    (chunks, stats.allocations + stats.reallocations, seen)
}

fn body(len: usize, escape_xml: bool) -> Bytes {
    let s: String = PROSE.chars().cycle().take(len).collect();
    let s = if escape_xml { s.replace('<', "(") } else { s };
    Bytes::from(s.into_bytes())
}

// One test only: the allocator counts are global to the process.
#[test]
fn warm_hot_path_does_not_allocate_per_chunk() {
    // (name, warm-up bytes, hot input, allocation ceiling per chunk)
    let cases: [(&str, &[u8], Bytes, usize); 5] = [
        ("prose", b"Hello. ", body(1 << 20, false), 0),
        (
            "hermes string argument",
            b"<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"/tmp/x\", \"content\": \"",
            body(1 << 20, false),
            0,
        ),
        (
            "qwen3-coder parameter",
            b"<tool_call>\n<function=write_file>\n<parameter=content>\n",
            body(1 << 20, true),
            0,
        ),
        (
            // The special-token dialects' JSON arguments (`ArgsJson`).
            "deepseek string argument",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{\"path\": \"/tmp/x\", \"content\": \"".as_bytes(),
            body(1 << 20, false),
            0,
        ),
        (
            "pythonic string argument",
            b"[write_file(path=\"/tmp/x\", content=\"",
            body(1 << 20, false),
            0,
        ),
    ];
    new_parser_is_cheap();
    open_call_repairs_take_bounded_memory();
    kept_events_do_not_allocate();
    short_borrowed_text_does_not_allocate();
    let mut report = Vec::new();
    for (name, warm, hot, ceiling) in cases {
        for chunk in [16, 64, 4096] {
            let (chunks, allocs, events) = hot_path(warm, &hot, chunk);
            report.push(format!(
                "{name:24} {chunk:>5}-byte chunks: {chunks} chunks, {events} events, {allocs} allocations"
            ));
            assert!(
                events >= chunks / 2,
                "{name}: the hot path emits as it goes"
            );
            assert!(
                allocs <= ceiling * chunks + 2,
                "{name}, {chunk}-byte chunks: {allocs} allocations over {chunks} warm chunks"
            );
        }
    }
    println!("{}", report.join("\n"));
}

/// Prose fed as borrowed chunks (`Parser::feed`, which copies each text
/// event's bytes): a chunk's text of up to 23 bytes is held inline in its
/// event, so streaming prose in 4- and 16-byte chunks allocates nothing
/// (it took an allocation and a free per chunk when text events were
/// `Bytes`).
fn short_borrowed_text_does_not_allocate() {
    let prose: Vec<u8> = PROSE.bytes().cycle().take(64 << 10).collect();
    for chunk in [4, 16] {
        let mut p = Parser::new(Config::default());
        let mut events: Vec<Event> = Vec::with_capacity(64);
        p.feed(&prose[..4096], &mut events);
        events.clear();
        let region = Region::new(GLOBAL);
        let mut texts = 0;
        for c in prose[4096..].chunks(chunk) {
            p.feed(c, &mut events);
            texts += events.len();
            events.clear();
        }
        let stats = region.change();
        let allocs = stats.allocations + stats.reallocations;
        println!("borrowed prose, {chunk}-byte chunks: {texts} text events, {allocs} allocations");
        assert!(texts >= (prose.len() - 4096) / chunk / 2);
        assert!(allocs <= 2, "{chunk}-byte chunks: {allocs} allocations");
    }
}

/// A consumer that keeps every event (a proxy buffering a reply, a test
/// collecting them) of a call streamed in 4-byte chunks: the deltas are held
/// inline, so the chunks allocate nothing of their own — only the call's
/// arguments buffer grows, by doubling (8 allocations in all, 6 of them
/// those doublings). When deltas were cut from a shared buffer, kept deltas
/// pinned it and every few thousand chunks needed a new block: 72.
fn kept_events_do_not_allocate() {
    let warm = b"<tool_call>\n{\"name\": \"store\", \"arguments\": {\"items\": [";
    let item = b"{\"id\": 7, \"label\": \"item 7\", \"ok\": true}, ";
    let hot: Vec<u8> = item.iter().copied().cycle().take(256 << 10).collect();
    let mut p = Parser::new(Config::default());
    let mut events: Vec<Event> = Vec::with_capacity(hot.len() / 2);
    p.feed(warm, &mut events);
    p.feed(&hot[..4096], &mut events);
    let region = Region::new(GLOBAL);
    for c in hot[4096..].chunks(4) {
        p.feed(c, &mut events);
    }
    let stats = region.change();
    let chunks = (hot.len() - 4096) / 4;
    let deltas = events
        .iter()
        .filter(|e| matches!(e, Event::ToolArgs { .. }))
        .count();
    let allocs = stats.allocations + stats.reallocations;
    println!("kept events: {chunks} chunks, {deltas} deltas kept, {allocs} allocations");
    assert!(deltas >= chunks / 2, "{deltas} deltas for {chunks} chunks");
    assert!(
        allocs <= 12,
        "{allocs} allocations for {chunks} chunks whose events are kept"
    );
}

/// Two megabytes of stray commas inside one open call are two million
/// repairs: the call lists only `max_repairs` of them (and a marker), and
/// while it is open only about twice that many are kept (and those of one
/// 64 KB piece of a feed), so the memory in use stays bounded: 0.5 MB in
/// 4 KB chunks, 2 MB fed whole (it grew by 16 bytes a repair, 32 MB and
/// more here). Fed whole
/// and in 4 KB chunks, inside JSON arguments (Hermes, DeepSeek) and inside
/// a pythonic call.
/// Called from the one test below (the counts are global to the process).
fn open_call_repairs_take_bounded_memory() {
    let commas = Bytes::from(vec![b','; 2 << 20]);
    let heads: [&[u8]; 3] = [
        b"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1",
        b"[f(a=1",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1"
            .as_bytes(),
    ];
    for head in heads {
        for chunk in [4096, commas.len()] {
            let mut p = Parser::new(Config::default());
            let mut events: Vec<Event> = Vec::with_capacity(64);
            p.feed_bytes(Bytes::copy_from_slice(head), &mut events);
            events.clear();
            let region = Region::new(GLOBAL);
            for c in commas.chunks(chunk) {
                p.feed_bytes(commas.slice_ref(c), &mut events);
                events.clear();
            }
            let stats = region.change();
            // (Reallocations count in `bytes_allocated` and `bytes_deallocated`.)
            let in_use = stats.bytes_allocated as i64 - stats.bytes_deallocated as i64;
            assert!(
                in_use < 4 << 20,
                "{}, {chunk}-byte chunks: {in_use} bytes more in use after 2 MB of commas",
                String::from_utf8_lossy(head)
            );
            p.finish(&mut events);
            let Some(Event::ToolEnd { call, .. }) =
                events.iter().find(|e| matches!(e, Event::ToolEnd { .. }))
            else {
                panic!("a call");
            };
            assert_eq!(call.arguments, "{\"a\": 1}");
            assert_eq!(call.repairs.len(), Config::default().limits.max_repairs + 1);
        }
    }
}

/// A parser for a short reply is cheap to make: the trigger tables are built
/// once per dialect list and shared, so after the first parser, making one,
/// parsing a sentence and finishing takes a handful of allocations (it took
/// over a hundred, sorting the triggers anew for every parser). Called from
/// the one test below (the counts are global to the process).
fn new_parser_is_cheap() {
    let reply = Bytes::from_static(PROSE.as_bytes());
    let run = || {
        let mut p = Parser::new(Config::default());
        let mut events: Vec<Event> = Vec::with_capacity(8);
        p.feed_bytes(reply.clone(), &mut events);
        p.finish(&mut events);
        events.len()
    };
    assert!(run() > 0);
    let region = Region::new(GLOBAL);
    let n = run();
    let stats = region.change();
    let allocs = stats.allocations + stats.reallocations;
    println!("new parser + one sentence + finish: {allocs} allocations ({n} events)");
    assert!(allocs <= 4, "{allocs} allocations to parse one sentence");
}
