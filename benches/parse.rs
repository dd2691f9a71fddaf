//! Criterion benchmarks of the content parser.
//!
//! * `text_only/1MB`: prose with no call, fed whole (the scanning fast path).
//! * `hermes_10KB_args/{whole,4B}`: Hermes calls with ~10 KB of arguments each,
//!   fed whole and in 4-byte chunks (per-chunk overhead).
//! * `hermes_10KB_args/4B_events_only`: no parsing, only the event stream
//!   those 4-byte chunks must produce — one `ToolArgs` per chunk, its delta
//!   a copy of the chunk as the parser makes it, seen by the same consumer
//!   and dropped: the floor under `4B` that the event model sets.
//! * `string_arg/{100KB,1MB}_4B`: one call with one long string argument, in
//!   4-byte chunks: the 1 MB case must cost 10× the 100 KB one (linear).
//!
//! Every timed closure checks its result, so a broken parser cannot look fast.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use toolstream::{Config, Delta, Event, Span};

mod inputs;
use inputs::{hermes_calls, parse_with, prose, string_arg};

/// Feeds `input` in `chunk`-byte pieces (0: whole) and returns the number of calls.
fn run(input: &[u8], chunk: usize, events: &mut Vec<Event>) -> usize {
    let mut calls = 0;
    parse_with(&Config::default(), input, chunk, events, |evs| {
        calls += evs
            .iter()
            .filter(|e| matches!(e, Event::ToolEnd { .. }))
            .count();
    });
    calls
}

/// The events of [`run`] for a call streamed in `chunk`-byte pieces, and
/// nothing else: one `ToolArgs` per piece, its delta a copy of the piece
/// (what the parser's arena makes of it), seen by the consumer of [`run`]
/// and dropped. Returns the calls that consumer counted (none).
fn events_only(input: &[u8], chunk: usize, events: &mut Vec<Event>) -> usize {
    let mut calls = 0;
    let mut at = 0u64;
    for c in input.chunks(chunk) {
        let end = at + c.len() as u64;
        // As the parser pushes it (`Arena::push_args`): in place, once there
        // is room, so that the delta is not copied through the stack (a
        // store-forwarding stall that cost more than the rest of the event).
        if events.len() == events.capacity() {
            events.reserve(1);
        }
        let delta = Delta::copy_from_slice(c);
        if events.len() < events.capacity() {
            events.push(Event::ToolArgs {
                index: 0,
                delta,
                span: Span::new(at, end),
            });
        }
        at = end;
        calls += events
            .iter()
            .filter(|e| matches!(e, Event::ToolEnd { .. }))
            .count();
        events.clear();
    }
    calls
}

fn benches(c: &mut Criterion) {
    let mut events = Vec::with_capacity(64);

    let text = prose(1 << 20);
    let mut g = c.benchmark_group("text_only");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("1MB", |b| {
        b.iter(|| assert_eq!(run(black_box(&text), 0, &mut events), 0))
    });
    g.finish();

    let calls = hermes_calls(1 << 20);
    let n_calls = run(&calls, 0, &mut events);
    assert!(n_calls > 50);
    let mut g = c.benchmark_group("hermes_10KB_args");
    g.throughput(Throughput::Bytes(calls.len() as u64));
    for chunk in [0usize, 4] {
        let label = if chunk == 0 {
            "whole".to_string()
        } else {
            format!("{chunk}B")
        };
        g.bench_with_input(BenchmarkId::from_parameter(label), &chunk, |b, &chunk| {
            b.iter(|| assert_eq!(run(black_box(&calls), chunk, &mut events), n_calls))
        });
    }
    g.bench_function("4B_events_only", |b| {
        b.iter(|| assert_eq!(events_only(black_box(&calls), 4, &mut events), 0))
    });
    g.finish();

    let mut g = c.benchmark_group("string_arg");
    for (label, len) in [("100KB_4B", 100 << 10), ("1MB_4B", 1 << 20)] {
        let input = string_arg(len);
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function(label, |b| {
            b.iter(|| assert_eq!(run(black_box(&input), 4, &mut events), 1))
        });
    }
    g.finish();
}

criterion_group! {
    name = parse;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = benches
}
criterion_main!(parse);
