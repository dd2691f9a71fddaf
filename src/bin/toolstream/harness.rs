//! `toolstream harness`: parse an input and print one JSON object in the
//! format of the peer harnesses (`../shared/peers/README.md`), with in-process
//! timing, so toolstream can be compared with the peers run by
//! `benches/peers/compare.py` without measuring process start-up.
//!
//! ```text
//! toolstream harness [--chunk N] [--repeat K] [--dialect NAME[,NAME…]|auto] [--tools FILE] [FILE|-]
//! toolstream harness --serve     # one JSON request per stdin line, one answer line each
//! ```
//!
//! Output: `{"lib","version","mode":"whole"|"stream(chunk=N)","dialect","ok","result":{"content",
//! "reasoning_content","tool_calls":[{"name","arguments_raw","arguments","index"}]},"error",
//! "n_chunks","timing_ms":{"parse_last","parse_min","parse_median","runs"}}`.
//! The timed unit is the same as the harnesses': a new parser, every chunk
//! fed, `finish`, and the result accumulated (the chunks are cut before
//! timing). Events are folded into the result after every chunk, as a
//! streaming consumer does; keeping every event of a long stream alive (a
//! quarter of a million for a 1 MB call in 4-byte chunks) measured the
//! allocator more than the parser. `--chunk N` cuts every N bytes, moving each cut forward to the
//! next UTF-8 character boundary, like the harnesses' `chunk_text`.
//!
//! `--serve` requests: `{"input": str, "chunk": N, "repeat": K, "dialect": str, "tools": [...]}`
//! (all but `input` optional; `tools` in OpenAI or BFCL form).

#![allow(unreachable_pub)]

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};
use toolstream::{Config, Dialect, Event, Parser, ToolCall, Tools};

/// Arguments of `toolstream harness`.
#[derive(clap::Args)]
pub struct HarnessArgs {
    /// Feed the input in N-byte chunks (cuts moved forward to a UTF-8 boundary).
    #[arg(long, default_value_t = 0)]
    chunk: usize,
    /// Parse K times in-process; the timings are over these runs.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Dialect(s), comma-separated (`auto`: all of them).
    #[arg(long, default_value = "auto")]
    dialect: String,
    /// OpenAI-format (or BFCL-format) tool list, JSON file.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Serve requests: one JSON object per standard-input line.
    #[arg(long)]
    serve: bool,
    /// Input file (`-` or absent: standard input).
    file: Option<PathBuf>,
}

fn config(dialect: &str, tools: Option<&Value>) -> Result<Config, String> {
    let mut cfg = Config::default();
    if !dialect.eq_ignore_ascii_case("auto") {
        let ds = dialect
            .split(',')
            .map(|n| Dialect::from_name(n).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        cfg = cfg.with_dialects(ds);
    }
    if let Some(t) = tools {
        cfg = cfg.with_tools(Tools::from_value(t).map_err(|e| format!("tools: {e}"))?);
    }
    Ok(cfg)
}

/// Cuts every `n` bytes, each cut moved forward past UTF-8 continuation bytes.
fn chunks(input: &[u8], n: usize) -> Vec<&[u8]> {
    if n == 0 {
        return vec![input];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let mut j = (i + n).min(input.len());
        while j < input.len() && input[j] & 0xC0 == 0x80 {
            j += 1;
        }
        out.push(&input[i..j]);
        i = j;
    }
    out
}

/// What one run accumulates: the text, the reasoning and the calls.
struct Outcome {
    text: String,
    thinking: String,
    calls: Vec<ToolCall>,
}

/// Folds the events of one feed into the outcome and empties the list, as a
/// streaming consumer does (the criterion benches too): the events of a
/// long stream are not all kept alive at once.
fn absorb(
    events: &mut Vec<Event>,
    text: &mut Vec<u8>,
    thinking: &mut Vec<u8>,
    calls: &mut Vec<ToolCall>,
) {
    for e in events.drain(..) {
        match e {
            Event::Text { text: t, .. } => text.extend_from_slice(&t),
            Event::Thinking { text: t, .. } => thinking.extend_from_slice(&t),
            Event::ToolEnd { call, .. } => calls.push(*call),
            _ => {}
        }
    }
}

/// One parse of the pieces. Out of line, so that callgrind can count it
/// alone (`--toggle-collect='*harness::run'`), as the peer comparison does
/// for its instruction-count scaling table.
#[inline(never)]
fn run(cfg: &Config, pieces: &[&[u8]]) -> Outcome {
    let mut parser = Parser::new(cfg.clone());
    let mut events: Vec<Event> = Vec::new();
    let (mut text, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    for p in pieces {
        parser.feed(p, &mut events);
        absorb(&mut events, &mut text, &mut thinking, &mut calls);
    }
    parser.finish(&mut events);
    absorb(&mut events, &mut text, &mut thinking, &mut calls);
    Outcome {
        text: utf8(text),
        thinking: utf8(thinking),
        calls,
    }
}

/// The bytes as a `String`: moved when they are UTF-8 (checked by the
/// standard library's word-at-a-time validator), else a lossy copy.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e9).round() / 1e6
}

/// One harness answer for `input`.
fn answer(input: &[u8], chunk: usize, repeat: usize, dialect: &str, cfg: &Config) -> Value {
    let pieces = chunks(input, chunk);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let parsed = run(cfg, &pieces);
        times.push(t.elapsed());
        last = Some(parsed);
    }
    let parsed = last.expect("at least one run");
    let parse_last = ms(*times.last().expect("at least one run"));
    times.sort();
    let calls: Vec<Value> = parsed
        .calls
        .iter()
        .enumerate()
        .map(|(k, c)| {
            json!({
                "name": c.name,
                "arguments_raw": c.arguments,
                "arguments": c.arguments_value().unwrap_or(Value::Null),
                "index": k,
            })
        })
        .collect();
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let mut out = json!({
        "lib": "toolstream",
        "version": env!("CARGO_PKG_VERSION"),
        "mode": if chunk == 0 { "whole".to_owned() } else { format!("stream(chunk={chunk})") },
        "dialect": dialect,
        "ok": true,
        "result": {
            "content": nonempty(&parsed.text),
            "reasoning_content": nonempty(&parsed.thinking),
            "tool_calls": calls,
        },
        "error": null,
        "timing_ms": {
            "parse_last": parse_last,
            "parse_min": ms(times[0]),
            "parse_median": ms(times[times.len() / 2]),
            "runs": times.len(),
        },
    });
    if chunk != 0 {
        out["n_chunks"] = json!(pieces.len());
    }
    out
}

fn serve() -> io::Result<()> {
    let stdin = io::stdin();
    let mut w = BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Err(e) => json!({"lib": "toolstream", "harness_error": format!("bad request: {e}")}),
            Ok(req) => {
                let dialect = req["dialect"].as_str().unwrap_or("auto");
                let tools = req.get("tools").filter(|t| !t.is_null());
                match config(dialect, tools) {
                    Err(e) => json!({"lib": "toolstream", "harness_error": e}),
                    Ok(cfg) => answer(
                        req["input"].as_str().unwrap_or_default().as_bytes(),
                        req["chunk"].as_u64().unwrap_or(0) as usize,
                        req["repeat"].as_u64().unwrap_or(1) as usize,
                        dialect,
                        &cfg,
                    ),
                }
            }
        };
        serde_json::to_writer(&mut w, &reply)?;
        writeln!(w)?;
        w.flush()?;
    }
    Ok(())
}

/// Runs `toolstream harness`.
pub fn run_cmd(args: &HarnessArgs) -> ExitCode {
    if args.serve {
        return match serve() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => crate::fail(format!("serve: {e}")),
        };
    }
    let tools = match &args.tools {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => Some(v),
            Err(e) => return crate::fail(format!("{}: {e}", p.display())),
        },
    };
    let cfg = match config(&args.dialect, tools.as_ref()) {
        Ok(c) => c,
        Err(e) => return crate::fail(e),
    };
    let input = match crate::read_input(args.file.as_deref()) {
        Ok(i) => i,
        Err(e) => return crate::fail(format!("cannot read input: {e}")),
    };
    let out = answer(&input, args.chunk, args.repeat, &args.dialect, &cfg);
    println!("{out}");
    ExitCode::SUCCESS
}
