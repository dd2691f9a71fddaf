//! Criterion benchmark: toolstream side by side with the Rust `tool-parser`
//! crate (SGLang's model gateway, lightseekorg/smg, 1.6.0 from crates.io),
//! on the same inputs, whole and streamed. It lives in its own crate
//! (`benches/smg/Cargo.toml`) so that tool-parser's dependencies stay out of
//! toolstream's build.
//!
//! Inputs (ASCII, generated here): one call of `write_file` whose `content`
//! argument is a string of 10 KB, 100 KB or 1 MB,
//!
//! * `hermes`: `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`
//!   (SMG `QwenParser`, which wants exactly those newlines; toolstream with
//!   the `hermes` dialect);
//! * `json`: the bare `{"name": …, "arguments": {…}}` object (SMG
//!   `JsonParser`; toolstream with the `json` dialect).
//!
//! Each is fed whole and in 4-, 16- and 64-byte chunks. toolstream goes
//! through `Parser::feed`/`finish`; SMG through its streaming API
//! (`parse_incremental` per chunk, then `get_unstreamed_tool_args`), or
//! `parse_complete` for the whole input. SMG's futures never wait on
//! anything, so they are polled once with a no-op waker (no runtime cost in
//! the timings).
//!
//! Before timing, every (parser, input, chunking) is run once and its call
//! checked against the expected name and arguments: toolstream must match
//! (assert); an SMG mismatch is printed as a finding and still timed. SMG
//! re-parses its whole buffer on every chunk (quadratic), so an SMG case
//! whose linear lower bound (10× the time of one run of the previous size,
//! same chunking) exceeds `BUDGET` is not timed and is printed as
//! `> budget`, never dropped silently.
//!
//! Run: `cargo bench --manifest-path benches/smg/Cargo.toml` (the first
//! build takes ~9 minutes on 2 cores, then a few minutes per run).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use openai_protocol::common::Tool;
use serde_json::{json, Value};
use tool_parser::{JsonParser, QwenParser, ToolParser};
use toolstream::{Config, Dialect, Event, Parser};

/// Longest single SMG run we accept to time (criterion needs 10 samples).
const BUDGET: Duration = Duration::from_secs(2);
const SIZES: [(usize, &str); 3] = [(10_000, "10KB"), (100_000, "100KB"), (1_000_000, "1MB")];
const CHUNKS: [usize; 4] = [0, 4, 16, 64];

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Hermes,
    Json,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Hermes => "hermes",
            Format::Json => "json",
        }
    }
}

/// ASCII prose without characters that need escaping in a JSON string.
fn content(len: usize) -> String {
    let base = "The quick brown fox jumps over the lazy dog, it was a bright cold day in April. ";
    base.chars().cycle().take(len).collect()
}

fn input(format: Format, len: usize) -> (String, Value) {
    let args = json!({"path": "/tmp/notes.txt", "content": content(len)});
    let call = format!(
        "{{\"name\": \"write_file\", \"arguments\": {}}}",
        serde_json::to_string(&args).expect("json")
    );
    let text = match format {
        Format::Hermes => format!("I will write the file.\n<tool_call>\n{call}\n</tool_call>"),
        Format::Json => call,
    };
    (text, args)
}

fn tools() -> Vec<Tool> {
    serde_json::from_value(json!([{"type": "function", "function": {
        "name": "write_file",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}}}}}]))
    .expect("tool list")
}

/// Splits at `n` bytes (0: whole); the inputs are ASCII.
fn pieces(text: &str, n: usize) -> Vec<&str> {
    if n == 0 {
        return vec![text];
    }
    text.as_bytes()
        .chunks(n)
        .map(|c| std::str::from_utf8(c).expect("ASCII input"))
        .collect()
}

/// Polls a future that never waits (SMG's parser futures) to completion.
fn now<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("tool-parser future did not complete synchronously"),
    }
}

/// toolstream: returns (name, arguments) of each call.
fn run_toolstream(
    format: Format,
    chunks: &[&str],
    events: &mut Vec<Event>,
) -> Vec<(String, String)> {
    let dialect = match format {
        Format::Hermes => Dialect::Hermes,
        Format::Json => Dialect::Json,
    };
    let mut p = Parser::new(Config::default().with_dialects(vec![dialect]));
    let mut calls = Vec::new();
    let mut take = |events: &mut Vec<Event>| {
        for e in events.drain(..) {
            if let Event::ToolEnd { call, .. } = e {
                calls.push((call.name.to_string(), call.arguments));
            }
        }
    };
    for c in chunks {
        p.feed(c.as_bytes(), events);
        take(events);
    }
    p.finish(events);
    take(events);
    calls
}

fn smg_parser(format: Format) -> Box<dyn ToolParser> {
    match format {
        Format::Hermes => Box::new(QwenParser::new()),
        Format::Json => Box::new(JsonParser::new()),
    }
}

/// SMG: whole input through `parse_complete`, chunks through
/// `parse_incremental` (+ the unstreamed-arguments flush, as the gateway does).
fn run_smg(format: Format, chunks: &[&str], tools: &[Tool]) -> Vec<(String, String)> {
    let mut p = smg_parser(format);
    if chunks.len() == 1 {
        let (_, calls) = now(p.parse_complete(chunks[0])).unwrap_or_default();
        return calls
            .into_iter()
            .map(|c| (c.function.name, c.function.arguments))
            .collect();
    }
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut add = |index: usize, name: Option<String>, params: &str| {
        if calls.len() <= index {
            calls.resize(index + 1, (String::new(), String::new()));
        }
        if let Some(n) = name {
            calls[index].0.push_str(&n);
        }
        calls[index].1.push_str(params);
    };
    for c in chunks {
        if let Ok(r) = now(p.parse_incremental(c, tools)) {
            for item in r.calls {
                add(item.tool_index, item.name, &item.parameters);
            }
        }
    }
    for item in p.get_unstreamed_tool_args().unwrap_or_default() {
        add(item.tool_index, item.name, &item.parameters);
    }
    calls
}

fn correct(calls: &[(String, String)], args: &Value) -> bool {
    calls.len() == 1
        && calls[0].0 == "write_file"
        && serde_json::from_str::<Value>(&calls[0].1).ok().as_ref() == Some(args)
}

fn bench(c: &mut Criterion) {
    let tools = tools();
    let mut events = Vec::new();
    for format in [Format::Hermes, Format::Json] {
        let mut group = c.benchmark_group(format!("tool_parser/{}", format.name()));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        // Time of one SMG run at the previous size, per chunking.
        let mut smg_prev: [Option<Duration>; CHUNKS.len()] = [None; CHUNKS.len()];
        for (len, label) in SIZES {
            let (text, args) = input(format, len);
            group.throughput(Throughput::Bytes(text.len() as u64));
            for (k, &n) in CHUNKS.iter().enumerate() {
                let chunks = pieces(&text, n);
                let mode = if n == 0 {
                    "whole".to_owned()
                } else {
                    format!("{n}B")
                };
                let id = format!("{label}/{mode}");
                assert!(
                    correct(&run_toolstream(format, &chunks, &mut events), &args),
                    "toolstream gives a wrong call on {}/{id}",
                    format.name()
                );
                group.bench_function(BenchmarkId::new("toolstream", &id), |b| {
                    b.iter(|| {
                        let calls = run_toolstream(format, black_box(&chunks), &mut events);
                        assert_eq!(calls.len(), 1);
                        calls
                    })
                });

                if let Some(prev) = smg_prev[k] {
                    if prev * 10 > BUDGET {
                        println!(
                            "tool_parser/{}/smg/{id}: > budget (not timed: one run at a tenth of the size took {prev:.2?}, so this one takes at least {:.2?} > {BUDGET:?})",
                            format.name(),
                            prev * 10
                        );
                        smg_prev[k] = Some(prev * 10);
                        continue;
                    }
                }
                let t = Instant::now();
                let once = run_smg(format, &chunks, &tools);
                smg_prev[k] = Some(t.elapsed());
                if !correct(&once, &args) {
                    println!(
                        "tool_parser/{}/smg/{id}: FINDING: SMG returns {} call(s), not the expected one (names {:?}, arguments {} bytes)",
                        format.name(),
                        once.len(),
                        once.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
                        once.first().map_or(0, |c| c.1.len())
                    );
                }
                if t.elapsed() > BUDGET {
                    println!(
                        "tool_parser/{}/smg/{id}: > budget (not timed: one run took {:.2?} > {BUDGET:?})",
                        format.name(),
                        t.elapsed()
                    );
                    continue;
                }
                group.bench_function(BenchmarkId::new("smg", &id), |b| {
                    b.iter(|| run_smg(format, black_box(&chunks), &tools))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
