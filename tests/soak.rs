//! Soak: many concurrent streams through one process, memory sampled.
//!
//! Worker threads each keep a set of streams open at once — random entries
//! of the real corpus (`corpus/real`, parsed) and the recorded provider
//! streams (`corpus/streams`, decoded with content re-parsing), each cut
//! at a random chunking — and feed them round-robin, a chunk at a time,
//! starting a new stream whenever one ends. Every stream's calls must equal
//! its one-shot parse, and the live heap (a counting allocator) sampled
//! after every round must stay flat after warm-up: its peak over the last
//! three quarters of the run at most 1.5 × the warm-up peak plus 4 MiB.
//!
//! Bounded for CI (about 20 s by default). A long run:
//! `TOOLSTREAM_SOAK_SECS=3600 cargo test --profile test-release --test soak -- --nocapture`
//! (`TOOLSTREAM_SOAK_THREADS`, `TOOLSTREAM_SOAK_STREAMS` set the workers and
//! the streams each keeps open; `SOAK_ONLY=parse` or `decode` keeps one
//! kind of stream; `TOOLSTREAM_SOAK_PRINT=1` prints the live heap as it runs).

use std::alloc::System;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use toolstream::provider::{DecodeOptions, StreamDecoder};
use toolstream::{Config, Event, Parsed, Parser, ToolCall};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Bytes live on the heap now (`stats_alloc` counts a reallocation's
/// growth or shrinking in `bytes_allocated` / `bytes_deallocated`).
fn live() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// A tiny deterministic generator (xorshift), one per worker.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One input: model output to parse, or a provider stream to decode.
struct Input {
    bytes: Vec<u8>,
    provider: bool,
    /// Its calls, read at once (the reference).
    calls: Vec<ToolCall>,
}

fn decode_opts() -> DecodeOptions {
    DecodeOptions::default().with_reparse(Config::default())
}

fn run_whole(bytes: &[u8], provider: bool) -> Vec<ToolCall> {
    let mut events = Vec::new();
    if provider {
        let mut d = StreamDecoder::new(decode_opts());
        d.feed(bytes, &mut events);
        d.finish(&mut events);
    } else {
        let mut p = Parser::new(Config::default());
        p.feed(bytes, &mut events);
        p.finish(&mut events);
    }
    Parsed::from_events(events).calls
}

fn inputs() -> Vec<Input> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut raw: Vec<(Vec<u8>, bool)> = Vec::new();
    for name in ["real/smollm2-135m.jsonl", "real/gemma3-270m.jsonl"] {
        let text = std::fs::read_to_string(root.join(name)).expect("corpus file");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let e: serde_json::Value = serde_json::from_str(line).expect("entry");
            raw.push((e["text"].as_str().expect("text").as_bytes().to_vec(), false));
        }
    }
    for e in std::fs::read_dir(root.join("streams")).expect("corpus/streams") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "sse") {
            raw.push((std::fs::read(&p).expect("stream"), true));
        }
    }
    assert!(raw.len() > 300, "{} inputs", raw.len());
    raw.into_iter()
        .map(|(bytes, provider)| Input {
            calls: run_whole(&bytes, provider),
            bytes,
            provider,
        })
        .collect()
}

enum Machine {
    Parse(Box<Parser>),
    Decode(Box<StreamDecoder>),
}

/// One open stream: what it reads, where it is, what it has given.
struct Stream {
    input: usize,
    at: usize,
    chunk: usize,
    machine: Machine,
    events: Vec<Event>,
    calls: Vec<ToolCall>,
}

impl Stream {
    fn new(inputs: &[Input], rng: &mut Rng) -> Stream {
        let mut input = rng.below(inputs.len());
        while std::env::var_os("SOAK_ONLY")
            .is_some_and(|v| (v == "decode") != inputs[input].provider)
        {
            input = rng.below(inputs.len());
        }
        let chunk = [1, 2, 3, 7, 16, 64, 512, 1 << 20][rng.below(8)];
        let machine = if inputs[input].provider {
            Machine::Decode(Box::new(StreamDecoder::new(decode_opts())))
        } else {
            Machine::Parse(Box::new(Parser::new(Config::default())))
        };
        Stream {
            input,
            at: 0,
            chunk,
            machine,
            events: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// Feeds one chunk (or finishes); true once the stream has ended.
    fn step(&mut self, inputs: &[Input]) -> bool {
        let bytes = &inputs[self.input].bytes;
        let end = (self.at + self.chunk).min(bytes.len());
        let done = end == bytes.len();
        match &mut self.machine {
            Machine::Parse(p) => {
                p.feed(&bytes[self.at..end], &mut self.events);
                if done {
                    p.finish(&mut self.events);
                }
            }
            Machine::Decode(d) => {
                d.feed(&bytes[self.at..end], &mut self.events);
                if done {
                    d.finish(&mut self.events);
                }
            }
        }
        self.at = end;
        // A consumer keeps the calls, not the events.
        for e in self.events.drain(..) {
            if let Event::ToolEnd { call, .. } = e {
                self.calls.push(*call);
            }
        }
        done
    }
}

#[test]
fn concurrent_streams_keep_memory_flat_and_calls_right() {
    let secs = env("TOOLSTREAM_SOAK_SECS", 20);
    let threads = env("TOOLSTREAM_SOAK_THREADS", 4) as usize;
    let per_thread = env("TOOLSTREAM_SOAK_STREAMS", 64) as usize;
    let inputs = Arc::new(inputs());
    let stop = Arc::new(AtomicBool::new(false));
    let streams_done = Arc::new(AtomicU64::new(0));
    let bytes_done = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for t in 0..threads {
        let (inputs, stop) = (inputs.clone(), stop.clone());
        let (streams_done, bytes_done) = (streams_done.clone(), bytes_done.clone());
        workers.push(std::thread::spawn(move || {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1));
            let mut open: Vec<Stream> = (0..per_thread)
                .map(|_| Stream::new(&inputs, &mut rng))
                .collect();
            while !stop.load(Ordering::Relaxed) {
                for s in open.iter_mut() {
                    if s.step(&inputs) {
                        let want = &inputs[s.input].calls;
                        assert_eq!(
                            &s.calls, want,
                            "stream {} at {}-byte chunks differs from its one-shot parse",
                            s.input, s.chunk
                        );
                        streams_done.fetch_add(1, Ordering::Relaxed);
                        bytes_done.fetch_add(inputs[s.input].bytes.len() as u64, Ordering::Relaxed);
                        *s = Stream::new(&inputs, &mut rng);
                    }
                }
            }
        }));
    }
    let start = Instant::now();
    let total = Duration::from_secs(secs);
    let mut samples: Vec<(f64, i64)> = Vec::new();
    while start.elapsed() < total {
        std::thread::sleep(Duration::from_millis(50));
        samples.push((start.elapsed().as_secs_f64(), live()));
        if std::env::var_os("TOOLSTREAM_SOAK_PRINT").is_some() && samples.len() % 20 == 0 {
            eprintln!(
                "soak: {:6.1} s live {:8.1} MiB, {} streams",
                start.elapsed().as_secs_f64(),
                live() as f64 / (1 << 20) as f64,
                streams_done.load(Ordering::Relaxed)
            );
        }
        if workers.iter().any(|w| w.is_finished()) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        if let Err(e) = w.join() {
            std::panic::resume_unwind(e);
        }
    }
    let warm = samples.len() / 4;
    let warm_peak = samples[..warm.max(1)]
        .iter()
        .map(|s| s.1)
        .max()
        .unwrap_or(0);
    let late_peak = samples[warm..].iter().map(|s| s.1).max().unwrap_or(0);
    let streams = streams_done.load(Ordering::Relaxed);
    let mb = bytes_done.load(Ordering::Relaxed) as f64 / 1e6;
    eprintln!(
        "soak: {secs} s, {threads} threads x {per_thread} open streams: {streams} streams, {mb:.1} MB; \
         live heap peak {:.1} MiB in the first quarter, {:.1} MiB after",
        warm_peak as f64 / (1 << 20) as f64,
        late_peak as f64 / (1 << 20) as f64
    );
    assert!(streams > 100, "only {streams} streams ran");
    assert!(
        late_peak <= warm_peak + warm_peak / 2 + (4 << 20),
        "live heap grew: {warm_peak} bytes at warm-up, {late_peak} after"
    );
}
