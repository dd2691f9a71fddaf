//! `toolstream decode`: a provider stream (SSE / NDJSON / eventstream) in,
//! events, calls or another provider's wire format out.

// `pub` is this module's interface to `main.rs` (and to the lead's `main.rs`
// at merge time); in a binary crate nothing is reachable from outside.
#![allow(unreachable_pub)]

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use toolstream::encode::{EncodeOptions, Encoder, Target};
use toolstream::provider::{DecodeOptions, Provider, StreamDecoder};
use toolstream::{Config, Dialect, Event, Parsed};

use crate::normalize::{DecodeNormalizeArgs, Stage};
use crate::output::{calls_json, event_json};

/// The provider to decode (`--from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// Detect the provider and framing from the first bytes.
    Auto,
    /// OpenAI Chat Completions and OpenAI-compatible servers.
    Openai,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama native `/api/chat` NDJSON.
    Ollama,
    /// Google Gemini / Vertex `streamGenerateContent`.
    Gemini,
    /// Cohere v2 chat.
    Cohere,
    /// AWS Bedrock ConverseStream.
    Bedrock,
}

/// What to print (`--output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One JSON object per event (NDJSON), as `toolstream parse` prints them.
    Events,
    /// One JSON object with the text, the thinking and the finished calls.
    Calls,
    /// Re-encoded as OpenAI Chat Completions SSE.
    Openai,
    /// Re-encoded as Anthropic Messages SSE.
    Anthropic,
    /// Re-encoded as OpenAI Responses SSE.
    Responses,
}

/// Arguments of `toolstream decode`.
#[derive(Clone, Debug, clap::Args)]
pub struct DecodeArgs {
    /// The provider API of the input stream.
    #[arg(long, value_enum, default_value = "auto")]
    pub from: Source,
    /// The model id: written into re-encoded output, and used to pick the
    /// tool-call dialect when re-parsing content (`qwen…` → hermes, …;
    /// anything else: auto-detection).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// Parse text content for tool calls written in-band (a local model
    /// behind an OpenAI-compatible server) and merge them with native calls.
    #[arg(long)]
    pub reparse_content: bool,
    /// Feed the decoder in reads of N bytes (default: as the input arrives).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_size: Option<u64>,
    /// What to print.
    #[arg(long, value_enum, default_value = "events")]
    pub output: Output,
    #[command(flatten)]
    pub normalize: DecodeNormalizeArgs,
    /// The stream to decode (`-` or nothing: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

fn provider(f: Source) -> Option<Provider> {
    match f {
        Source::Auto => None,
        Source::Openai => Some(Provider::OpenAi),
        Source::Responses => Some(Provider::Responses),
        Source::Anthropic => Some(Provider::Anthropic),
        Source::Ollama => Some(Provider::Ollama),
        Source::Gemini => Some(Provider::Gemini),
        Source::Cohere => Some(Provider::Cohere),
        Source::Bedrock => Some(Provider::Bedrock),
    }
}

/// The dialects to re-parse content with for a model id (the library's
/// model routing table; unknown and custom models: auto-detection).
fn dialects_for_model(model: &str) -> Vec<Dialect> {
    toolstream::model::route(model).dialects
}

#[allow(clippy::large_enum_variant)] // one per process
enum Sink<W: Write> {
    Events(W),
    Calls(W, Vec<Event>),
    Wire(W, Box<Encoder>, Vec<u8>),
}

impl<W: Write> Sink<W> {
    fn push(&mut self, events: &mut Vec<Event>, stage: &Stage) -> io::Result<()> {
        match self {
            Sink::Events(w) => {
                for e in events.drain(..) {
                    serde_json::to_writer(&mut *w, &event_json(&e))?;
                    w.write_all(b"\n")?;
                    if let Some(line) = stage.report_line(&e) {
                        serde_json::to_writer(&mut *w, &line)?;
                        w.write_all(b"\n")?;
                    }
                }
                w.flush()
            }
            Sink::Calls(_, all) => {
                all.append(events);
                Ok(())
            }
            Sink::Wire(w, enc, buf) => {
                for e in events.drain(..) {
                    enc.encode(&e, buf);
                }
                w.write_all(buf)?;
                buf.clear();
                w.flush()
            }
        }
    }

    fn end(self, stage: &Stage) -> io::Result<()> {
        match self {
            Sink::Events(mut w) => w.flush(),
            Sink::Calls(mut w, all) => {
                let mut doc = serde_json::to_vec(&calls_json(&Parsed::from_events(all)))?;
                stage.annotate(&mut doc);
                w.write_all(&doc)?;
                w.write_all(b"\n")?;
                w.flush()
            }
            Sink::Wire(mut w, mut enc, mut buf) => {
                enc.finish(&mut buf);
                w.write_all(&buf)?;
                w.flush()
            }
        }
    }
}

/// Runs `toolstream decode`.
pub fn run(args: &DecodeArgs) -> ExitCode {
    match decode(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolstream decode: {e}");
            ExitCode::from(1)
        }
    }
}

fn decode(args: &DecodeArgs) -> io::Result<()> {
    let mut opts = DecodeOptions {
        provider: provider(args.from),
        ..DecodeOptions::default()
    };
    if args.reparse_content {
        let dialects = args
            .model
            .as_deref()
            .map(dialects_for_model)
            .unwrap_or_default();
        opts.reparse = Some(Config::default().with_dialects(dialects));
    }
    let mut input: Box<dyn Read> = match args.file.as_deref() {
        None => Box::new(io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(io::stdin().lock()),
        Some(p) => Box::new(
            std::fs::File::open(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?,
        ),
    };
    let stdout = BufWriter::new(io::stdout().lock());
    let enc_opts = EncodeOptions {
        model: args.model.clone().unwrap_or_else(|| "toolstream".into()),
        ..EncodeOptions::default()
    };
    let wire = |t: Target| Box::new(Encoder::new(t, enc_opts.clone()));
    let mut sink = match args.output {
        Output::Events => Sink::Events(stdout),
        Output::Calls => Sink::Calls(stdout, Vec::new()),
        Output::Openai => Sink::Wire(stdout, wire(Target::OpenAi), Vec::new()),
        Output::Anthropic => Sink::Wire(stdout, wire(Target::Anthropic), Vec::new()),
        Output::Responses => Sink::Wire(stdout, wire(Target::Responses), Vec::new()),
    };
    let tools = args
        .normalize
        .tools
        .as_deref()
        .filter(|_| args.normalize.normalize);
    let mut stage = Stage::new(tools, &args.normalize.switches)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut dec = StreamDecoder::new(opts);
    let mut events = Vec::new();
    let chunk = args
        .chunk_size
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        match chunk {
            Some(size) => {
                for piece in buf[..n].chunks(size) {
                    dec.feed(piece, &mut events);
                    stage.apply(&mut events);
                    sink.push(&mut events, &stage)?;
                }
            }
            None => {
                dec.feed(&buf[..n], &mut events);
                stage.apply(&mut events);
                sink.push(&mut events, &stage)?;
            }
        }
    }
    dec.finish(&mut events);
    stage.apply(&mut events);
    stage.finish(&mut events);
    sink.push(&mut events, &stage)?;
    sink.end(&stage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_dialects() {
        assert_eq!(dialects_for_model("Qwen/Qwen3-8B"), vec![Dialect::Hermes]);
        assert_eq!(dialects_for_model("qwen3:4b"), vec![Dialect::Hermes]);
        assert_eq!(
            dialects_for_model("NousResearch/Hermes-3-Llama-3.1-8B"),
            vec![Dialect::Hermes]
        );
        assert!(dialects_for_model("gpt-4o").is_empty());
    }
}
