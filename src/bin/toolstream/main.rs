//! The `toolstream` command-line tool.
//!
//! ```text
//! toolstream parse  [--dialect NAME|auto] [--model ID] [--tools FILE] [--prefill TEXT]
//!                   [--chunk-size N | --chunks FILE] [--output events|calls] [LIMITS] [FILE|-]
//! toolstream repair [--chunk-size N] [LIMITS] [FILE|-]
//! toolstream decode [--from PROVIDER|auto] [--model ID] [--reparse-content] [--max-frame-bytes SIZE]
//!                   [--chunk-size N] [--output events|calls|openai|anthropic|responses] [LIMITS] [FILE|-]
//! toolstream harness [--chunk N] [--repeat K] [--dialect NAME|auto] [--tools FILE] [--serve] [FILE|-]
//! toolstream normalize --tools FILE [--strict] [FILE|-]
//! toolstream proxy  --upstream URL [--listen ADDR] [--model ID] [--mode native|emulate|auto] [--config FILE]
//! toolstream tools convert|adapt|simplify|audit|search …   (see `toolstream tools --help`)
//! toolstream prompt --tools FILE [--format F] [--model ID | --size S] [--query TEXT] [--budget N]
//! toolstream models show ID [--models FILE]
//! ```
//!
//! Every subcommand reads its input as it arrives and writes each result
//! as soon as it is complete, in memory bounded by the limits.

mod common;
mod decode;
mod harness;
mod models;
mod normalize;
mod output;
mod prompt;
mod proxy;
mod tools;

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser as ClapParser, Subcommand, ValueEnum};
use mimalloc::MiMalloc;
use toolstream::{Config, Dialect, Event, Parsed, Parser, ToolCall, Tools};

use common::{Failure, LimitArgs};

#[derive(ClapParser)]
#[command(
    name = "toolstream",
    version,
    about = "Turn streamed LLM output into typed tool calls.",
    after_help = "Exit codes (every subcommand): 0 done; 1 the input could not give what was \
                  asked (repair: no JSON, or a limit cut the document; decode: not a provider \
                  stream); 2 bad options, unreadable input or option files, unwritable output."
)]
struct Cli {
    /// Print nothing on standard error but failures.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also print every diagnostic on standard error.
    #[arg(short, long, global = true)]
    verbose: bool,
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
    /// (the benchmark protocol of benches/peers/compare.py).
    #[command(hide = true)]
    Harness(harness::HarnessArgs),
    /// Check and fix tool calls (NDJSON, one per line) against the offered tools.
    Normalize(normalize::NormalizeArgs),
    /// Serve native tool calls from a local OpenAI-compatible server to
    /// OpenAI- and Anthropic-style clients (Claude Code, Codex, the SDKs).
    Proxy(proxy::ProxyArgs),
    /// Tool lists: convert between providers, adapt schemas, simplify, audit, search.
    Tools(tools::ToolsArgs),
    /// Render the emulation prompt for a tool list (models without native tools).
    Prompt(prompt::PromptArgs),
    /// What the capability registry knows of a model id.
    Models(models::ModelsArgs),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Output {
    /// NDJSON, one event per line, each written as soon as it is complete.
    Events,
    /// One JSON object {"text", "thinking", "calls"} at the end.
    Calls,
}

/// The `--dialect` help: the names it takes.
fn dialect_help() -> String {
    let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
    format!(
        "Dialect(s) to recognise, comma-separated, or `auto` for all of them: {}",
        names.join(", ")
    )
}

#[derive(clap::Args)]
struct ParseArgs {
    #[arg(long, default_value = "auto", value_name = "NAME[,NAME…]", help = dialect_help())]
    dialect: String,
    /// Model id (`Qwen/Qwen3-Coder-30B-A3B-Instruct`, `llama3.3:70b`, …): picks
    /// the dialects to expect when `--dialect` is `auto`.
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    /// Tool list, a JSON file: OpenAI chat or Responses tools, Anthropic
    /// tools, Gemini `functionDeclarations`, an MCP `tools/list` result, or
    /// `{"name", "parameters"}` objects, for name matching and typing.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    #[command(flatten)]
    normalize: normalize::ParseNormalizeArgs,
    /// The prompt's tail the output continues (e.g. "<think>\n").
    #[arg(long)]
    prefill: Option<String>,
    /// Feed the input in pieces of N bytes.
    #[arg(long, value_name = "N", conflicts_with = "chunks", value_parser = clap::value_parser!(u64).range(1..))]
    chunk_size: Option<u64>,
    /// Feed the chunks of a JSON array of strings (standard input is then ignored).
    #[arg(long, value_name = "FILE")]
    chunks: Option<PathBuf>,
    /// What to print.
    #[arg(long, value_enum, default_value = "events")]
    output: Output,
    #[command(flatten)]
    limits: LimitArgs,
    /// Input file (`-` or absent: standard input).
    file: Option<PathBuf>,
}

#[derive(clap::Args)]
struct RepairArgs {
    /// Feed the input in pieces of N bytes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    chunk_size: Option<u64>,
    /// (`repair` reads `--max-depth`, `--max-token-bytes`, `--max-args-bytes`
    /// (per value), `--max-repairs` and `--max-input-bytes`.)
    #[command(flatten)]
    limits: LimitArgs,
    /// Input file (`-` or absent: standard input).
    file: Option<PathBuf>,
}

/// Reads the whole input (`harness`, a benchmark protocol, times whole inputs).
fn read_input(file: Option<&Path>) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    match file {
        Some(p) if p != Path::new("-") => {
            buf = std::fs::read(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?
        }
        _ => {
            io::stdin().read_to_end(&mut buf)?;
        }
    }
    Ok(buf)
}

/// `harness`'s failure message and exit code.
fn fail(msg: impl std::fmt::Display) -> ExitCode {
    common::finish("harness", Err(Failure::Usage(msg.to_string())))
}

/// The tool list of `--tools FILE`, with the shape expected named when it
/// is not one.
fn tools(path: &PathBuf) -> Result<Tools, Failure> {
    let text = common::read_option_file("--tools", path)?;
    // The OpenAI shape first (the parser's own reader), then every shape the
    // normalizer reads (Responses, Anthropic, Gemini, MCP `tools/list`).
    Tools::from_json(&text)
        .or_else(|_| toolstream::normalize::read_tools(&text).map(|(tools, _)| tools))
        .map_err(|e| {
            Failure::Usage(format!(
                "--tools {}: {e}; expected a JSON list of tools, each \
                 {{\"type\": \"function\", \"function\": {{\"name\": …, \"parameters\": {{…}}}}}} \
                 or {{\"name\": …, \"parameters\": {{…}}}}, or the tools of another API \
                 (Responses, Anthropic `input_schema`, Gemini `functionDeclarations`, MCP `tools/list`)",
                path.display()
            ))
        })
}

/// The dialects for `--model` (auto-detection, with a warning, for a model
/// the routing table does not know).
fn model_dialects(command: &str, model: &str) -> Vec<Dialect> {
    let route = toolstream::model::route(model);
    if route.dialect_names.is_empty() {
        common::warn(
            command,
            format_args!(
                "model `{model}` is not in the routing table; falling back to auto-detection over every dialect"
            ),
        );
    }
    route.dialects
}

fn config(args: &ParseArgs) -> Result<Config, Failure> {
    let mut cfg = Config::default();
    if let Some(m) = &args.model {
        if args.dialect.eq_ignore_ascii_case("auto") {
            cfg = cfg.with_dialects(model_dialects("parse", m));
        }
        // The family's policy for calls written inside reasoning.
        cfg = cfg.with_calls_in_reasoning(toolstream::model::route(m).calls_in_reasoning);
    }
    if !args.dialect.eq_ignore_ascii_case("auto") {
        let mut ds = Vec::new();
        for name in args.dialect.split(',') {
            ds.push(Dialect::from_name(name.trim()).map_err(|e| {
                Failure::Usage(format!("--dialect: {e} (see `toolstream parse --help`)"))
            })?);
        }
        cfg = cfg.with_dialects(ds);
    }
    if let Some(p) = &args.tools {
        cfg = cfg.with_tools(tools(p)?);
    }
    if let Some(p) = &args.prefill {
        cfg = cfg.with_prefill(p.clone());
    }
    Ok(cfg.with_limits(args.limits.limits()))
}

/// The chunks of `--chunks FILE`.
fn chunk_file(p: &PathBuf) -> Result<Vec<String>, Failure> {
    let text = common::read_option_file("--chunks", p)?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::Usage(format!(
            "--chunks {}: expected a JSON list of strings: {e}",
            p.display()
        ))
    })
}

/// Where `parse` and `decode` put events: written at once (NDJSON), or
/// folded into the text, thinking and calls of the final object (only
/// those are kept).
pub(crate) enum EventSink<W: Write> {
    /// One line per event.
    Events(W),
    /// The final object's parts.
    Calls {
        out: W,
        text: Vec<u8>,
        thinking: Vec<u8>,
        calls: Vec<ToolCall>,
    },
}

impl<W: Write> EventSink<W> {
    /// Lines for `--output events`, the final object for `--output calls`.
    pub(crate) fn new(out: W, lines: bool) -> Self {
        if lines {
            EventSink::Events(out)
        } else {
            EventSink::Calls {
                out,
                text: Vec::new(),
                thinking: Vec::new(),
                calls: Vec::new(),
            }
        }
    }

    /// Takes `events` (leaving the list empty).
    pub(crate) fn push(
        &mut self,
        command: &str,
        events: &mut Vec<Event>,
        stage: &normalize::Stage,
    ) -> Result<(), Failure> {
        for e in events.drain(..) {
            output::report(command, &e);
            match self {
                EventSink::Events(w) => {
                    serde_json::to_writer(&mut *w, &output::event_json(&e))
                        .map_err(|e| common::write_failed(e.into()))?;
                    w.write_all(b"\n").map_err(common::write_failed)?;
                    if let Some(d) = output::utf8_diagnostic(&e) {
                        serde_json::to_writer(&mut *w, &d)
                            .map_err(|e| common::write_failed(e.into()))?;
                        w.write_all(b"\n").map_err(common::write_failed)?;
                    }
                    if let Some(line) = stage.report_line(&e) {
                        serde_json::to_writer(&mut *w, &line)
                            .map_err(|e| common::write_failed(e.into()))?;
                        w.write_all(b"\n").map_err(common::write_failed)?;
                    }
                }
                EventSink::Calls {
                    text,
                    thinking,
                    calls,
                    ..
                } => match e {
                    Event::Text { text: t, .. } => text.extend_from_slice(&t),
                    Event::Thinking { text: t, .. } => thinking.extend_from_slice(&t),
                    Event::ToolEnd { call, .. } => calls.push(*call),
                    _ => {}
                },
            }
        }
        Ok(())
    }

    /// Flushes what was written.
    pub(crate) fn flush(&mut self) -> Result<(), Failure> {
        match self {
            EventSink::Events(w) => w.flush().map_err(common::write_failed),
            EventSink::Calls { .. } => Ok(()),
        }
    }

    /// Writes the final object (`--output calls`) and flushes.
    pub(crate) fn end(self, stage: &normalize::Stage) -> Result<(), Failure> {
        match self {
            EventSink::Events(mut w) => w.flush().map_err(common::write_failed),
            EventSink::Calls {
                mut out,
                text,
                thinking,
                calls,
            } => {
                // Moved, not copied, when UTF-8 (the text may be most of the input).
                let string = |b: Vec<u8>| {
                    String::from_utf8(b)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
                };
                let parsed = Parsed {
                    text: string(text),
                    thinking: string(thinking),
                    calls,
                    events: Vec::new(),
                };
                // The calls exactly as the parser wrote them (numbers as
                // written), then the normalizer's reports, if it ran.
                let mut doc = serde_json::to_vec(&output::calls_json(&parsed))
                    .map_err(|e| common::write_failed(e.into()))?;
                stage.annotate(&mut doc);
                out.write_all(&doc).map_err(common::write_failed)?;
                out.write_all(b"\n").map_err(common::write_failed)?;
                out.flush().map_err(common::write_failed)
            }
        }
    }
}

fn parse(args: &ParseArgs) -> Result<(), Failure> {
    let cfg = config(args)?;
    let pieces = args.chunks.as_ref().map(chunk_file).transpose()?;
    let mut input = match &pieces {
        Some(_) => None,
        None => Some(common::open_input(args.file.as_deref())?),
    };
    let mut sink = EventSink::new(
        BufWriter::new(io::stdout().lock()),
        args.output == Output::Events,
    );
    let tools = args.tools.as_deref().filter(|_| args.normalize.normalize);
    let mut stage =
        normalize::Stage::new(tools, &args.normalize.switches).map_err(Failure::Usage)?;
    let mut parser = Parser::new(cfg);
    let mut events: Vec<Event> = Vec::new();
    if let Some(pieces) = &pieces {
        for piece in pieces {
            parser.feed(piece.as_bytes(), &mut events);
            stage.apply(&mut events);
            sink.push("parse", &mut events, &stage)?;
        }
    }
    if let Some(input) = input.as_mut() {
        let chunk = args
            .chunk_size
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        // The parser applies `max_input_bytes` itself.
        common::stream_input(&mut **input, chunk, usize::MAX, |piece| match piece {
            Some(piece) => {
                parser.feed(piece, &mut events);
                stage.apply(&mut events);
                sink.push("parse", &mut events, &stage)
            }
            None => sink.flush(),
        })?;
    }
    parser.finish(&mut events);
    stage.apply(&mut events);
    stage.finish(&mut events);
    sink.push("parse", &mut events, &stage)?;
    sink.end(&stage)
}

fn repair(args: &RepairArgs) -> Result<(), Failure> {
    use toolstream::json::DocumentRepairer;
    let limits = args.limits.limits();
    let mut input = common::open_input(args.file.as_deref())?;
    let mut w = BufWriter::new(io::stdout().lock());
    let mut doc = DocumentRepairer::new(&limits);
    let mut out = Vec::new();
    let chunk = args
        .chunk_size
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let over = common::stream_input(&mut *input, chunk, limits.max_input_bytes, |piece| {
        match piece {
            Some(piece) => {
                doc.feed(piece, &mut out);
                w.write_all(&out).map_err(common::write_failed)?;
                out.clear();
            }
            None => w.flush().map_err(common::write_failed)?,
        }
        Ok(())
    })?;
    let end = doc.finish(&mut out);
    if !out.is_empty() {
        out.push(b'\n');
    }
    w.write_all(&out).map_err(common::write_failed)?;
    w.flush().map_err(common::write_failed)?;
    let end = end.map_err(|e| Failure::Input(e.to_string()))?;
    if let Some(hit) = end.limit {
        return Err(Failure::Input(format!(
            "{} ({}) reached at byte {}: the output is cut there (raise {} to read the whole document)",
            hit.limit,
            common::Size(limits.get(hit.limit)),
            hit.offset,
            common::flag(hit.limit)
        )));
    }
    if over {
        return Err(Failure::Input(format!(
            "max_input_bytes ({}) reached: the input was read no further (raise --max-input-bytes to read it all)",
            common::Size(limits.max_input_bytes)
        )));
    }
    Ok(())
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
    common::set_verbosity(cli.quiet, cli.verbose);
    match &cli.command {
        Command::Parse(a) => common::finish("parse", parse(a)),
        Command::Repair(a) => common::finish("repair", repair(a)),
        Command::Decode(a) => common::finish("decode", decode::run(a)),
        Command::Harness(a) => harness::run_cmd(a),
        Command::Normalize(a) => normalize::run(a),
        Command::Proxy(a) => proxy::run(a),
        Command::Tools(a) => tools::run(a),
        Command::Prompt(a) => prompt::run(a),
        Command::Models(a) => models::run(a),
    }
}
