//! The `toolstream` command-line tool.
//!
//! ```text
//! toolstream parse  [--dialect NAME|auto] [--model ID] [--tools FILE] [--prefill TEXT]
//!                   [--chunk-size N | --chunks FILE] [--output events|calls] [FILE|-]
//! toolstream repair [--chunk-size N] [FILE|-]
//! toolstream decode [--from PROVIDER|auto] [--model ID] [--reparse-content]
//!                   [--chunk-size N] [--output events|calls|openai|anthropic|responses] [FILE|-]
//! toolstream harness [--chunk N] [--repeat K] [--dialect NAME|auto] [--tools FILE] [--serve] [FILE|-]
//! toolstream normalize --tools FILE [--strict] [FILE|-]
//! ```

mod decode;
mod harness;
mod normalize;
mod output;

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser as ClapParser, Subcommand, ValueEnum};
use mimalloc::MiMalloc;
use toolstream::{Config, Dialect, Event, Parsed, Parser, Tools};

#[derive(ClapParser)]
#[command(
    name = "toolstream",
    version,
    about = "Turn streamed LLM output into typed tool calls."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse model output (raw text) into text, thinking and tool calls.
    Parse(ParseArgs),
    /// Repair the JSON in a piece of text and print it.
    Repair(RepairArgs),
    /// Decode a provider stream (SSE / NDJSON) into events, or re-encode it for another provider.
    Decode(decode::DecodeArgs),
    /// Parse with in-process timing and print the peer-harness JSON format
    /// (used by benches/peers/compare.py).
    Harness(harness::HarnessArgs),
    /// Check and fix tool calls (NDJSON, one per line) against the offered tools.
    Normalize(normalize::NormalizeArgs),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Output {
    /// NDJSON, one event per line.
    Events,
    /// One JSON object {"text", "thinking", "calls"}.
    Calls,
}

#[derive(clap::Args)]
struct ParseArgs {
    /// Dialect(s) to recognise, comma-separated (`auto`: all of them).
    #[arg(long, default_value = "auto")]
    dialect: String,
    /// Model id (`Qwen/Qwen3-Coder-30B-A3B-Instruct`, `llama3.3:70b`, …): picks
    /// the dialects to expect when `--dialect` is `auto`.
    #[arg(long)]
    model: Option<String>,
    /// Tool list (JSON file: OpenAI, Anthropic, Gemini, MCP or bare shape)
    /// for name matching and typing.
    #[arg(long)]
    tools: Option<PathBuf>,
    #[command(flatten)]
    normalize: normalize::ParseNormalizeArgs,
    /// The prompt's tail the output continues (e.g. "<think>\n").
    #[arg(long)]
    prefill: Option<String>,
    /// Feed the input in pieces of N bytes.
    #[arg(long, conflicts_with = "chunks")]
    chunk_size: Option<usize>,
    /// Feed the chunks of a JSON array of strings (standard input is then ignored).
    #[arg(long)]
    chunks: Option<PathBuf>,
    /// What to print.
    #[arg(long, value_enum, default_value = "events")]
    output: Output,
    #[command(flatten)]
    limits: LimitArgs,
    /// Input file (`-` or absent: standard input).
    file: Option<PathBuf>,
}

/// Resource limits (defaults: see `toolstream::Limits`).
#[derive(clap::Args)]
struct LimitArgs {
    /// Maximum JSON nesting depth.
    #[arg(long)]
    max_depth: Option<usize>,
    /// Maximum size of one call's arguments, in bytes.
    #[arg(long)]
    max_args_bytes: Option<usize>,
    /// Maximum bytes held back while deciding whether something is a call.
    #[arg(long)]
    max_held_bytes: Option<usize>,
    /// Maximum size of one held token (key, number, bare word).
    #[arg(long)]
    max_token_bytes: Option<usize>,
    /// Maximum length of one markup tag of the XML dialects.
    #[arg(long)]
    max_tag_bytes: Option<usize>,
    /// Maximum number of repairs listed for one call (more are made, not listed).
    #[arg(long)]
    max_repairs: Option<usize>,
}

impl LimitArgs {
    fn apply(&self, mut l: toolstream::Limits) -> toolstream::Limits {
        if let Some(v) = self.max_depth {
            l.max_depth = v;
        }
        if let Some(v) = self.max_args_bytes {
            l.max_args_bytes = v;
        }
        if let Some(v) = self.max_held_bytes {
            l.max_held_bytes = v;
        }
        if let Some(v) = self.max_token_bytes {
            l.max_token_bytes = v;
        }
        if let Some(v) = self.max_tag_bytes {
            l.max_tag_bytes = v;
        }
        if let Some(v) = self.max_repairs {
            l.max_repairs = v;
        }
        l
    }
}

#[derive(clap::Args)]
struct RepairArgs {
    /// Feed the input in pieces of N bytes.
    #[arg(long)]
    chunk_size: Option<usize>,
    /// Input file (`-` or absent: standard input).
    file: Option<PathBuf>,
}

fn read_input(file: Option<&Path>) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    match file {
        None => {
            io::stdin().read_to_end(&mut buf)?;
        }
        Some(p) if p == Path::new("-") => {
            io::stdin().read_to_end(&mut buf)?;
        }
        Some(p) => {
            buf = std::fs::read(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?
        }
    }
    Ok(buf)
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("toolstream: {msg}");
    ExitCode::from(2)
}

fn config(args: &ParseArgs) -> Result<Config, String> {
    let mut cfg = Config::default();
    if let Some(m) = &args.model {
        cfg = cfg.with_dialects(toolstream::model::route(m).dialects);
    }
    if !args.dialect.eq_ignore_ascii_case("auto") {
        let mut ds = Vec::new();
        for name in args.dialect.split(',') {
            ds.push(Dialect::from_name(name).map_err(|e| e.to_string())?);
        }
        cfg = cfg.with_dialects(ds);
    }
    if let Some(p) = &args.tools {
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let tools = match Tools::from_json(&text) {
            Ok(t) => t,
            Err(_) => normalize::load_tools(p)?,
        };
        cfg = cfg.with_tools(tools);
    }
    if let Some(p) = &args.prefill {
        cfg = cfg.with_prefill(p.clone());
    }
    let limits = args.limits.apply(cfg.limits.clone());
    Ok(cfg.with_limits(limits))
}

/// Splits the input into the chunks to feed.
fn chunks(args: &ParseArgs) -> Result<Vec<Vec<u8>>, String> {
    if let Some(p) = &args.chunks {
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let list: Vec<String> = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a JSON array of strings: {e}", p.display()))?;
        return Ok(list.into_iter().map(String::into_bytes).collect());
    }
    let input = read_input(args.file.as_deref()).map_err(|e| format!("cannot read input: {e}"))?;
    Ok(match args.chunk_size {
        Some(0) => return Err("--chunk-size must be at least 1".into()),
        Some(n) => input.chunks(n).map(<[u8]>::to_vec).collect(),
        None => vec![input],
    })
}

fn parse(args: &ParseArgs) -> ExitCode {
    let cfg = match config(args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let pieces = match chunks(args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let stdout = io::stdout();
    let mut w = BufWriter::new(stdout.lock());
    let tools = args.tools.as_deref().filter(|_| args.normalize.normalize);
    let mut stage = match normalize::Stage::new(tools, &args.normalize.switches) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let mut parser = Parser::new(cfg);
    let mut events: Vec<Event> = Vec::new();
    let mut all: Vec<Event> = Vec::new();
    let res = (|| -> io::Result<()> {
        for piece in &pieces {
            parser.feed(piece, &mut events);
            stage.apply(&mut events);
            emit(&mut w, args.output, &mut events, &mut all, &stage)?;
        }
        parser.finish(&mut events);
        stage.apply(&mut events);
        stage.finish(&mut events);
        emit(&mut w, args.output, &mut events, &mut all, &stage)?;
        if args.output == Output::Calls {
            let parsed = Parsed::from_events(std::mem::take(&mut all));
            let mut doc = serde_json::to_vec(&output::calls_json(&parsed))?;
            stage.annotate(&mut doc);
            w.write_all(&doc)?;
            writeln!(w)?;
        }
        w.flush()
    })();
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot write output: {e}")),
    }
}

/// Prints events as they come (NDJSON) or keeps them for the final object.
fn emit(
    w: &mut impl Write,
    output: Output,
    events: &mut Vec<Event>,
    all: &mut Vec<Event>,
    stage: &normalize::Stage,
) -> io::Result<()> {
    match output {
        Output::Events => {
            for e in events.drain(..) {
                serde_json::to_writer(&mut *w, &output::event_json(&e))?;
                writeln!(w)?;
                if let Some(line) = stage.report_line(&e) {
                    serde_json::to_writer(&mut *w, &line)?;
                    writeln!(w)?;
                }
            }
            w.flush()
        }
        Output::Calls => {
            all.append(events);
            Ok(())
        }
    }
}

fn repair(args: &RepairArgs) -> ExitCode {
    let input = match read_input(args.file.as_deref()) {
        Ok(i) => i,
        Err(e) => return fail(format!("cannot read input: {e}")),
    };
    if args.chunk_size == Some(0) {
        return fail("--chunk-size must be at least 1");
    }
    match toolstream::json::repair_document(&input, args.chunk_size.unwrap_or(0)) {
        Ok(r) => {
            println!("{}", r.json);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolstream: {e}");
            ExitCode::from(1)
        }
    }
}

/// The tool's allocator. glibc's malloc hands the megabyte buffers of a long
/// call (its arguments, their deltas) back to the kernel when they are freed
/// and faults them in again for the next one: with it, a 1 MB call took about
/// five times as long as parsing it (see README, "Allocator"). The library
/// itself leaves the allocator to its user.
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Parse(a) => parse(a),
        Command::Repair(a) => repair(a),
        Command::Decode(a) => decode::run(a),
        Command::Harness(a) => harness::run_cmd(a),
        Command::Normalize(a) => normalize::run(a),
    }
}
