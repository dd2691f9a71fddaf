//! Provider stream codec benchmarks.
//!
//! * `decode/*`: an OpenAI Chat Completions SSE capture and an Anthropic
//!   Messages capture, each replayed 1,000 times back to back, decoded by a
//!   `StreamDecoder` (provider auto-detected) in 64-byte reads, 4 KiB reads
//!   and one read. Throughput is input bytes; every iteration checks the
//!   number of events and calls.
//! * `payload_parse/*`: the hot path of every decoder, parsing one SSE data
//!   payload and reading a few fields, with simd-json's tape (what the
//!   decoders use, buffers reused), `serde_json::Value`, and typed
//!   `serde_json` structs. This is the measurement behind the choice
//!   documented in `src/provider/json.rs`.
//! * `encode/*`: the decoded OpenAI replay re-encoded to each target.
//!
//! Allocations per event are counted in `tests/codec_alloc.rs`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde::Deserialize;
use toolstream::encode::{encode, EncodeOptions, Target};
use toolstream::provider::{DecodeOptions, StreamDecoder};
use toolstream::Event;

const OPENAI: &[u8] = include_bytes!("data/openai_chat_gpt4o_parallel_tools.openai-python.sse");
const ANTHROPIC: &[u8] = include_bytes!("data/anthropic_thinking_text_tool.rig.sse");
const REPLAYS: usize = 1000;

fn replay(one: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(one.len() * REPLAYS + 2);
    for _ in 0..REPLAYS {
        v.extend_from_slice(one);
        if !one.ends_with(b"\n\n") {
            v.extend_from_slice(b"\n\n");
        }
    }
    Bytes::from(v)
}

fn decode(input: &Bytes, chunk: usize) -> (usize, usize) {
    let mut d = StreamDecoder::new(DecodeOptions::default());
    let mut events = Vec::with_capacity(256);
    let (mut n, mut calls) = (0, 0);
    let mut i = 0;
    while i < input.len() {
        let end = i.saturating_add(chunk).min(input.len());
        d.feed_bytes(input.slice(i..end), &mut events);
        i = end;
        n += events.len();
        calls += events
            .iter()
            .filter(|e| matches!(e, Event::ToolEnd { .. }))
            .count();
        events.clear();
    }
    d.finish(&mut events);
    n += events.len();
    (n, calls)
}

fn bench_decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    g.sample_size(20);
    for (name, one, calls_per) in [
        ("openai_chat_x1000", OPENAI, 2),
        ("anthropic_x1000", ANTHROPIC, 1),
    ] {
        let input = replay(one);
        let (events, calls) = decode(&input, input.len());
        assert_eq!(calls, calls_per * REPLAYS);
        g.throughput(Throughput::Bytes(input.len() as u64));
        for chunk in [64usize, 4096, usize::MAX] {
            let label = if chunk == usize::MAX {
                "whole".to_string()
            } else {
                chunk.to_string()
            };
            g.bench_with_input(BenchmarkId::new(name, label), &chunk, |b, &chunk| {
                b.iter(|| {
                    let got = decode(black_box(&input), chunk);
                    assert_eq!(got, (events, calls));
                })
            });
        }
    }
    g.finish();
}

/// The data payloads of the OpenAI capture.
fn payloads() -> Vec<Vec<u8>> {
    OPENAI
        .split(|&b| b == b'\n')
        .filter_map(|l| l.strip_prefix(b"data: "))
        .filter(|l| l.starts_with(b"{"))
        .map(<[u8]>::to_vec)
        .collect()
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    arguments: Option<std::borrow::Cow<'a, str>>,
}

fn bench_payload_parse(c: &mut Criterion) {
    use simd_json::prelude::*;
    let ps = payloads();
    let total: usize = ps.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("payload_parse");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("simd_json_tape_reused", |b| {
        let mut scratch = Vec::new();
        let mut buffers = simd_json::Buffers::new(1024);
        let mut store = simd_json::tape::Tape(Vec::new());
        b.iter(|| {
            let mut n = 0usize;
            for p in &ps {
                scratch.clear();
                scratch.extend_from_slice(p);
                scratch.resize(p.len() + simd_json::INPUT_PADDING, b' ');
                let mut tape =
                    std::mem::replace(&mut store, simd_json::tape::Tape(Vec::new())).reset();
                simd_json::fill_tape_padded(&mut scratch, p.len(), &mut buffers, &mut tape)
                    .unwrap();
                let v = tape.as_value();
                if let Some(ch) = v.get("choices").and_then(|c| c.get_idx(0)) {
                    let d = ch.get("delta");
                    n += d
                        .and_then(|d| d.get("content"))
                        .and_then(|c| c.into_string())
                        .map_or(0, str::len);
                    if let Some(tc) = d
                        .and_then(|d| d.get("tool_calls"))
                        .and_then(|t| t.get_idx(0))
                    {
                        let f = tc.get("function");
                        n += f
                            .and_then(|f| f.get("arguments"))
                            .and_then(|a| a.into_string())
                            .map_or(0, str::len);
                        n += tc.get("index").and_then(|i| i.as_u64()).unwrap_or(0) as usize;
                    }
                }
                store = tape.reset();
            }
            black_box(n)
        })
    });
    g.bench_function("serde_json_value", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for p in &ps {
                let v: serde_json::Value = serde_json::from_slice(p).unwrap();
                let d = &v["choices"][0]["delta"];
                n += d["content"].as_str().map_or(0, str::len);
                n += d["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .map_or(0, str::len);
                n += d["tool_calls"][0]["index"].as_u64().unwrap_or(0) as usize;
            }
            black_box(n)
        })
    });
    g.bench_function("serde_json_typed", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for p in &ps {
                let c: Chunk<'_> = serde_json::from_slice(p).unwrap();
                for ch in &c.choices {
                    n += ch.finish_reason.as_deref().map_or(0, str::len);
                    if let Some(d) = &ch.delta {
                        n += d.content.as_deref().map_or(0, str::len);
                        for t in d.tool_calls.iter().flatten() {
                            n += t
                                .function
                                .as_ref()
                                .and_then(|f| f.arguments.as_deref())
                                .map_or(0, str::len);
                            n += t.index.unwrap_or(0) as usize;
                        }
                    }
                }
            }
            black_box(n)
        })
    });
    g.finish();
}

fn bench_encode(c: &mut Criterion) {
    let input = replay(OPENAI);
    let mut d = StreamDecoder::new(DecodeOptions::default());
    let mut events = Vec::new();
    d.feed_bytes(input, &mut events);
    d.finish(&mut events);
    let mut g = c.benchmark_group("encode");
    g.sample_size(20);
    g.throughput(Throughput::Elements(events.len() as u64));
    for t in [Target::OpenAi, Target::Anthropic, Target::Responses] {
        g.bench_function(t.name(), |b| {
            b.iter(|| {
                let out = encode(black_box(&events), t, &EncodeOptions::default());
                assert!(!out.is_empty());
                out.len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_decode, bench_payload_parse, bench_encode);
criterion_main!(benches);
