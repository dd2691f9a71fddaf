//! Profiling driver (for callgrind): parses the tool-dense Hermes input of
//! `benches/parse.rs` (or prose with `text`), whole or in N-byte chunks.
//!
//! `cargo bench --bench profile -- [hermes|text|string|calls|empty|FILE|FILE.jsonl] [chunk] [reps] [bytes]`
//! (`calls`: the Rust peer comparison's "64 calls" input, `benches/rust_peers`'
//! `small_calls`, with its tools; the last argument is then the number of
//! calls, 64 by default; `prose`: its "1 MB prose" input, with its tools,
//! the last argument its length, 1,000,000 by default; `matrix:DIALECT`: one cell of `benches/matrix.rs`,
//! its input for that dialect with a `content` argument of `bytes` (or
//! `100B`, `10KB`, `1MB`), fed as that bench feeds it, `Bytes` slices, to a
//! parser in auto mode: under callgrind
//! `--toggle-collect=profile::matrix_one`)
//! (with `WITH_TOOLS=1`, each line of a `.jsonl` file is parsed with its own
//! `tools`, as the peer comparison's harness parses the corpus), or
//! under callgrind: `valgrind --tool=callgrind --toggle-collect=profile::parse_one target/release/deps/profile-* hermes 4 1`
//! (instruction counts repeat exactly, whatever else the machine is doing).
//! With `--features cli` it allocates with mimalloc, as the CLI does
//! (without, with the system allocator). `DIALECTS=hermes,qwen` limits the
//! dialects (as the Rust peer comparison limits toolstream to `hermes`).

use toolstream::{Config, Dialect, Event, Parser, Tools};

// The allocator of the `toolstream` binary (whose `harness` command the peer
// comparison times), so that allocations cost here what they cost there.
// The criterion benches keep the system allocator, as a library user has.
#[cfg(feature = "cli")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod inputs;
use inputs::{hermes_calls, parse_with, prose, string_arg};
#[path = "inputs/matrix.rs"]
mod matrix_inputs;

fn main() {
    // `cargo bench` passes `--bench`: flags are not ours.
    let args: Vec<String> = std::env::args().filter(|a| !a.starts_with("--")).collect();
    let kind = args.get(1).map(String::as_str).unwrap_or("hermes");
    let chunk: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let size: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    if let Some(dialect) = kind.strip_prefix("matrix:") {
        let label = args.get(4).map(String::as_str).unwrap_or("10KB");
        let len = matrix_inputs::ARG_SIZES
            .iter()
            .find(|(l, _)| *l == label)
            .map_or(size, |&(_, len)| len);
        return matrix_cell(dialect, len, chunk, reps);
    }
    let input = match kind {
        "text" => prose(size),
        "string" => string_arg(size),
        // Parser set-up and finish alone (the fixed cost of a short reply).
        "empty" => Vec::new(),
        "hermes" => hermes_calls(size),
        "calls" => small_calls(args.get(4).and_then(|s| s.parse().ok()).unwrap_or(64)),
        "prose" => peer_prose(
            args.get(4)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000),
        ),
        // Anything else is a file to parse; a `.jsonl` file holds one input
        // per line, in its `text` field (the corpus), each parsed on its own.
        path => std::fs::read(path).expect("hermes, text, string, empty or a file"),
    };
    let with_tools = std::env::var_os("WITH_TOOLS").is_some_and(|v| v == "1");
    let inputs: Vec<(Vec<u8>, Config)> = if kind.ends_with(".jsonl") {
        input
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_slice(l).expect("a JSON line");
                let text = v["text"]
                    .as_str()
                    .expect("a text field")
                    .as_bytes()
                    .to_vec();
                let tools = with_tools.then(|| Tools::from_value(&v["tools"]).ok());
                let cfg = match tools.flatten() {
                    Some(tools) => Config::default().with_tools(tools),
                    None => Config::default(),
                };
                (text, cfg)
            })
            .collect()
    } else if kind == "calls" || kind == "prose" {
        let tools = Tools::from_value(&peer_tools()).expect("tools");
        vec![(input, Config::default().with_tools(tools))]
    } else {
        vec![(input, Config::default())]
    };
    let dialects: Option<Vec<Dialect>> = std::env::var("DIALECTS").ok().map(|v| {
        v.split(',')
            .map(|d| d.parse().expect("a dialect name"))
            .collect()
    });
    let inputs: Vec<(Vec<u8>, Config)> = match dialects {
        Some(d) => inputs
            .into_iter()
            .map(|(i, c)| (i, c.with_dialects(d.clone())))
            .collect(),
        None => inputs,
    };
    let mut events: Vec<Event> = Vec::with_capacity(64);
    // The dialect table is built once per process and dialect list (by the
    // first parser of that list):
    // not part of any measured parse.
    for (_, cfg) in &inputs {
        drop(Parser::new(cfg.clone()));
    }
    let mut calls = 0usize;
    let mut arg_bytes = 0usize;
    let t = std::time::Instant::now();
    for (input, cfg) in std::iter::repeat_n(&inputs, reps).flatten() {
        let (c, a) = parse_one(cfg, input, chunk, &mut events);
        calls += c;
        arg_bytes += a;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{kind} chunk={chunk} reps={reps}: {calls} calls, {arg_bytes} arg bytes, {:.1} MiB/s",
        (inputs.iter().map(|(i, _)| i.len()).sum::<usize>() * reps) as f64
            / secs
            / (1 << 20) as f64
    );
}

/// `n` small `get_weather` calls, each after ~300 bytes of prose, with the
/// Hermes template's newlines: byte for byte the input of the Rust peer
/// comparison's "64 calls" rows (`benches/rust_peers/src/inputs.rs`).
fn small_calls(n: usize) -> Vec<u8> {
    let base = "The quick brown fox jumps over the lazy dog; it was a bright cold day in April, and the clocks were striking thirteen.\n";
    let prose: String = base.chars().cycle().take(290).collect();
    let mut text = String::new();
    for k in 0..n {
        text.push_str(&format!("Step {k}: {prose}"));
        let args =
            serde_json::json!({"city": format!("Paris {k}"), "unit": "celsius", "days": k % 7});
        text.push_str(&format!(
            "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {args}}}\n</tool_call>"
        ));
    }
    text.push_str("Those are all the forecasts.\n");
    text.into_bytes()
}

/// `len` bytes of prose without a call, a line break every 119 bytes:
/// byte for byte the input of the Rust peer comparison's "1 MB prose" rows
/// (`benches/rust_peers/src/inputs.rs`' `prose_only(1_000_000)`; parsed,
/// like "64 calls", with that comparison's tools).
fn peer_prose(len: usize) -> Vec<u8> {
    let base = "The quick brown fox jumps over the lazy dog; it was a bright cold day in April, and the clocks were striking thirteen.\n";
    base.chars()
        .cycle()
        .take(len)
        .collect::<String>()
        .into_bytes()
}

/// The tools of the Rust peer comparison's synthetic inputs.
fn peer_tools() -> serde_json::Value {
    serde_json::json!([
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"},
                "days": {"type": "integer"}}}}}
    ])
}

/// One parse: a new parser, every chunk fed, `finish`, the events counted.
/// Out of line, so that callgrind can count it alone
/// (`--toggle-collect=profile::parse_one`).
#[inline(never)]
fn parse_one(cfg: &Config, input: &[u8], chunk: usize, events: &mut Vec<Event>) -> (usize, usize) {
    let mut calls = 0usize;
    let mut arg_bytes = 0usize;
    parse_with(cfg, input, chunk, events, |evs| {
        for e in evs {
            match e {
                Event::ToolEnd { .. } => calls += 1,
                Event::ToolArgs { delta, .. } => arg_bytes += delta.len(),
                _ => {}
            }
        }
    });
    (calls, arg_bytes)
}

/// Parses one cell of `benches/matrix.rs` `reps` times (after one parse
/// not counted: the dialect tables, lazily built statics).
fn matrix_cell(dialect: &str, len: usize, chunk: usize, reps: usize) {
    let input = matrix_inputs::inputs(len)
        .into_iter()
        .find(|(d, _)| *d == dialect)
        .map(|(_, i)| i)
        .expect("a dialect of benches/matrix.rs");
    let mut events = Vec::with_capacity(1 << 16);
    let first = matrix_inputs::run(&input, chunk, &mut events);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        assert_eq!(matrix_one(&input, chunk, &mut events), first);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "matrix:{dialect} {len} chunk={chunk} reps={reps}: {first} arg bytes, {:.1} MiB/s",
        (input.len() * reps) as f64 / secs / (1 << 20) as f64
    );
}

/// A counted [`matrix_inputs::run`]: out of line, for callgrind
/// (`--toggle-collect=profile::matrix_one`; the first parse, not counted,
/// calls [`matrix_inputs::run`] directly).
#[inline(never)]
fn matrix_one(input: &bytes::Bytes, chunk: usize, events: &mut Vec<Event>) -> usize {
    matrix_inputs::run(input, chunk, events)
}
