//! Criterion benchmarks of the normalizer, next to the parser's cost.
//!
//! * `corpus/parse` and `corpus/parse_normalize`: every reply of
//!   `corpus/real/` (SmolLM2-135M, Gemma-3-270M, with the tools each was
//!   offered) parsed whole, then parsed and run through the streaming
//!   normalizer. The difference is what normalizing adds (target: < 20 %).
//!   Each tool set's [`Catalog`] is built once, outside the timing, as a
//!   proxy builds it once per request's tool list.
//! * `call/{valid,fixed}`: one call normalized one-shot against Claude Code's
//!   real tool list (a valid `Read`; a `read` call needing a name, a
//!   parameter name, a coercion and a null removed).
//! * `mb/string_arg_{parse,normalize}`: a Hermes call whose 1 MB string
//!   argument streams through in 4 KB chunks: parsed; parsed and normalized.
//! * `mb/held_values`: 1 MB of arguments that must each be held and coerced
//!   (an array of integers written as strings), normalized one-shot.
//! * `catalog/{build,cached}`: Claude Code's tool list compiled into a
//!   [`Catalog`]; fetched again from a [`CatalogCache`] (what a proxy pays
//!   per request for a tool list it has seen).
//!
//! Every timed closure checks its result, so a broken normalizer cannot look fast.
//! Run: `cargo bench --bench normalize`.
//!
//! Instruction counts (callgrind, independent of the machine's load): with
//! `TS_PROFILE=parse` or `TS_PROFILE=normalize` (and `TS_PASSES`, default
//! 3) the binary runs that many passes of `corpus/parse` or
//! `corpus/parse_normalize` in `pass` instead of criterion:
//! `TS_PROFILE=normalize valgrind --tool=callgrind --toggle-collect='normalize::pass'
//! target/test-release/deps/normalize-*`. The normalizer's share is the
//! `normalize` count less the `parse` one. `TS_PROFILE=dump` prints every
//! normalized event and report of the corpus instead (to diff two builds);
//! `TS_PROFILE=call` streams three single calls (valid, missing a required
//! parameter, unknown tool) a thousand times each, to count one call.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, Criterion, Throughput};
use serde_json::Value;
use toolstream::normalize::{
    read_tools, read_tools_value, Catalog, CatalogCache, Normalizer, Options,
};
use toolstream::{parse, Config, Event, Parser};

struct Reply {
    text: String,
    cfg: Config,
    catalog: Arc<Catalog>,
}

fn corpus() -> Vec<Reply> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/real");
    let mut out = Vec::new();
    for f in ["smollm2-135m.jsonl", "gemma3-270m.jsonl"] {
        let text = std::fs::read_to_string(dir.join(f)).expect("corpus/real");
        for line in text.lines() {
            let Ok(row) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Ok((tools, _)) = read_tools_value(&row["tools"]) else {
                continue;
            };
            out.push(Reply {
                text: row["text"].as_str().unwrap_or_default().to_owned(),
                cfg: Config::default().with_tools(tools.clone()),
                catalog: Arc::new(Catalog::new(&tools)),
            });
        }
    }
    out
}

fn claude_code() -> Arc<Catalog> {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/tools/claude_code.json"),
    )
    .expect("corpus/tools/claude_code.json");
    Arc::new(Catalog::new(&read_tools(&text).expect("tools").0))
}

/// Parses `text` (and normalizes its events when `catalog` is given);
/// returns the calls ended.
fn run(text: &[u8], chunk: usize, cfg: &Config, catalog: Option<&Arc<Catalog>>) -> usize {
    let mut parser = Parser::new(cfg.clone());
    let mut norm = catalog.map(|c| Normalizer::new(c.clone()));
    let mut events = Vec::new();
    let mut calls = 0;
    let mut outs = Vec::new();
    let mut take = |events: &mut Vec<Event>, norm: &mut Option<Normalizer>| {
        for e in events.drain(..) {
            match norm {
                Some(n) => {
                    n.push_into(e, &mut outs);
                    for o in outs.drain(..) {
                        calls += usize::from(matches!(o.event, Event::ToolEnd { .. }));
                    }
                }
                None => calls += usize::from(matches!(e, Event::ToolEnd { .. })),
            }
        }
    };
    let step = if chunk == 0 { text.len().max(1) } else { chunk };
    for piece in text.chunks(step) {
        parser.feed(piece, &mut events);
        take(&mut events, &mut norm);
    }
    parser.finish(&mut events);
    take(&mut events, &mut norm);
    calls
}

fn benches(c: &mut Criterion) {
    let replies = corpus();
    let bytes: usize = replies.iter().map(|r| r.text.len()).sum();
    let expected: usize = replies
        .iter()
        .map(|r| parse(r.text.as_bytes(), &r.cfg).calls.len())
        .sum();
    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("parse", |b| {
        b.iter(|| {
            let n: usize = replies
                .iter()
                .map(|r| run(black_box(r.text.as_bytes()), 0, &r.cfg, None))
                .sum();
            assert_eq!(n, expected);
        })
    });
    g.bench_function("parse_normalize", |b| {
        b.iter(|| {
            let n: usize = replies
                .iter()
                .map(|r| run(black_box(r.text.as_bytes()), 0, &r.cfg, Some(&r.catalog)))
                .sum();
            assert_eq!(n, expected);
        })
    });
    g.finish();

    let cc = claude_code();
    let cc_tools = read_tools(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/tools/claude_code.json"),
        )
        .expect("corpus/tools/claude_code.json"),
    )
    .expect("tools")
    .0;
    let mut g = c.benchmark_group("catalog");
    g.bench_function("build", |b| {
        b.iter(|| {
            assert_eq!(
                Catalog::new(black_box(&cc_tools)).names().len(),
                cc.names().len()
            )
        })
    });
    let cache = CatalogCache::new(Options::default(), 16);
    cache.get(&cc_tools);
    g.bench_function("cached", |b| {
        b.iter(|| {
            assert_eq!(
                cache.get(black_box(&cc_tools)).names().len(),
                cc.names().len()
            )
        })
    });
    g.finish();

    let mut g = c.benchmark_group("call");
    g.bench_function("valid", |b| {
        b.iter(|| {
            let o = cc.normalize(
                black_box("Read"),
                black_box(r#"{"file_path": "/etc/hosts", "limit": 20}"#),
            );
            assert!(o.report.is_ok() && o.report.fixes.is_empty());
        })
    });
    g.bench_function("fixed", |b| {
        b.iter(|| {
            let o = cc.normalize(
                black_box("read"),
                black_box(r#"{"filePath": "/etc/hosts", "limit": "20", "offset": null}"#),
            );
            assert!(o.report.is_ok() && o.report.fixes.len() == 4);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("mb");
    let content = "x".repeat(1 << 20);
    let call = format!(
        r#"<tool_call>{{"name": "Write", "arguments": {{"file_path": "/big", "content": "{content}"}}}}</tool_call>"#
    );
    let cfg = Config::default();
    g.throughput(Throughput::Bytes(call.len() as u64));
    g.bench_function("string_arg_parse", |b| {
        b.iter(|| assert_eq!(run(black_box(call.as_bytes()), 4096, &cfg, None), 1))
    });
    g.bench_function("string_arg_normalize", |b| {
        b.iter(|| assert_eq!(run(black_box(call.as_bytes()), 4096, &cfg, Some(&cc)), 1))
    });
    let tools = read_tools(
        r#"[{"name": "sort_list", "parameters": {"type": "object",
            "properties": {"elements": {"type": "array", "items": {"type": "integer"}}}}}]"#,
    )
    .unwrap()
    .0;
    let held = Catalog::new(&tools);
    let items: Vec<String> = (0..(1 << 20) / 10)
        .map(|i| format!("\"{}\"", 100_000 + i))
        .collect();
    let args = format!(r#"{{"elements": [{}]}}"#, items.join(", "));
    g.throughput(Throughput::Bytes(args.len() as u64));
    g.bench_function("held_values", |b| {
        b.iter(|| {
            let o = held.normalize("sort_list", black_box(&args));
            assert!(o.report.is_ok());
        })
    });
    g.finish();
}

/// One pass over the corpus (out of line, so that callgrind can count it alone).
#[inline(never)]
fn pass(replies: &[Reply], normalize: bool) -> usize {
    replies
        .iter()
        .map(|r| {
            run(
                black_box(r.text.as_bytes()),
                0,
                &r.cfg,
                normalize.then_some(&r.catalog),
            )
        })
        .sum()
}

/// Calls streamed one by one in `TS_PROFILE=call` (each function's
/// inclusive count over callgrind's call count is the cost of one call).
const PER_CALL_REPEATS: usize = 1000;

/// `TS_PROFILE=call`: three calls against Claude Code's tools, each streamed
/// [`PER_CALL_REPEATS`] times through a fresh [`Normalizer`] (events parsed
/// once, outside; the normalized events dropped, as in `pass`): a valid
/// `Read`, a `Read` missing its required `file_path`, and a tool that does
/// not exist; and the valid call's events without a normalizer. Count each
/// with `--toggle-collect='normalize::call_valid'` (and so on).
fn per_call() -> usize {
    let cc = claude_code();
    let events = |text: &str| -> Vec<Vec<Event>> {
        let parsed = parse(text.as_bytes(), &Config::default()).events;
        (0..PER_CALL_REPEATS).map(|_| parsed.clone()).collect()
    };
    let valid = events(
        r#"<tool_call>{"name": "Read", "arguments": {"file_path": "/etc/hosts", "limit": 20}}</tool_call>"#,
    );
    let missing = events(r#"<tool_call>{"name": "Read", "arguments": {"limit": 20}}</tool_call>"#);
    let unknown = events(
        r#"<tool_call>{"name": "read_hosts", "arguments": {"path": "/etc/hosts"}}</tool_call>"#,
    );
    let plain = events(
        r#"<tool_call>{"name": "Read", "arguments": {"file_path": "/etc/hosts", "limit": 20}}</tool_call>"#,
    );
    call_valid(&cc, valid)
        + call_missing(&cc, missing)
        + call_unknown(&cc, unknown)
        + call_events_only(plain)
}

/// The events of the valid call taken and dropped without a normalizer
/// (what the consumer pays anyway: subtract it from the `call_*` counts).
#[inline(never)]
fn call_events_only(calls: Vec<Vec<Event>>) -> usize {
    let mut ended = 0;
    for events in calls {
        for e in events {
            ended += usize::from(matches!(e, Event::ToolEnd { .. }));
        }
    }
    ended
}

/// Streams each call's events through a fresh normalizer; returns the
/// reports that found no error.
fn stream_calls(cat: &Arc<Catalog>, calls: Vec<Vec<Event>>) -> usize {
    let mut ok = 0;
    let mut outs = Vec::new();
    for events in calls {
        let mut norm = Normalizer::new(cat.clone());
        for e in events {
            norm.push_into(e, &mut outs);
        }
        for o in outs.drain(..) {
            ok += usize::from(o.report.is_some_and(|r| r.is_ok()));
        }
    }
    ok
}

#[inline(never)]
fn call_valid(cat: &Arc<Catalog>, calls: Vec<Vec<Event>>) -> usize {
    // Distinct bodies: identical ones would be merged into one symbol.
    stream_calls(cat, calls) + black_box(1) - 1
}

#[inline(never)]
fn call_missing(cat: &Arc<Catalog>, calls: Vec<Vec<Event>>) -> usize {
    // Distinct bodies: identical ones would be merged into one symbol.
    stream_calls(cat, calls) + black_box(2) - 2
}

#[inline(never)]
fn call_unknown(cat: &Arc<Catalog>, calls: Vec<Vec<Event>>) -> usize {
    // Distinct bodies: identical ones would be merged into one symbol.
    stream_calls(cat, calls) + black_box(3) - 3
}

/// `TS_PROFILE=dump`: every normalized event of every reply, one a line
/// (the report of a `ToolEnd` after it), to compare two builds' outputs.
fn dump(replies: &[Reply]) {
    for r in replies {
        let mut parser = Parser::new(r.cfg.clone());
        let mut norm = Normalizer::new(r.catalog.clone());
        let mut events = Vec::new();
        let mut outs = Vec::new();
        for piece in r.text.as_bytes().chunks(r.text.len().max(1)) {
            parser.feed(piece, &mut events);
        }
        parser.finish(&mut events);
        for e in events.drain(..) {
            norm.push_into(e, &mut outs);
        }
        outs.extend(norm.finish());
        for o in outs {
            println!("{:?}", o.event);
            if let (Some(rep), Event::ToolEnd { call, .. }) = (&o.report, &o.event) {
                println!(
                    "  report: written {:?} fixes {:?} omitted {} errors {:?}",
                    rep.name_as_written(&call.name),
                    rep.fixes,
                    rep.fixes_omitted,
                    rep.errors
                );
            }
        }
    }
}

/// The callgrind driver (see the module docs): `Some(calls ended)` when
/// `TS_PROFILE` asked for it.
fn profile() -> Option<usize> {
    let mode = std::env::var("TS_PROFILE").ok()?;
    let passes: usize = std::env::var("TS_PASSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(3);
    if mode == "call" {
        return Some(per_call());
    }
    let replies = corpus();
    if mode == "dump" {
        dump(&replies);
        return Some(0);
    }
    let normalize = match mode.as_str() {
        "parse" => false,
        "normalize" => true,
        other => panic!("TS_PROFILE={other}: parse or normalize"),
    };
    Some((0..passes).map(|_| pass(&replies, normalize)).sum())
}

fn main() {
    if let Some(calls) = profile() {
        println!("{calls} calls ended");
        return;
    }
    normalize();
    Criterion::default().configure_from_args().final_summary();
}

criterion_group! {
    name = normalize;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = benches
}
