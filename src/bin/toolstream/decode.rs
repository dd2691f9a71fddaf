//! `toolstream decode`: a provider stream (SSE / NDJSON / eventstream) in,
//! events, calls or another provider's wire format out.

// `pub` is this module's interface to `main.rs` (and to the lead's `main.rs`
// at merge time); in a binary crate nothing is reachable from outside.
#![allow(unreachable_pub)]

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use toolstream::encode::{EncodeOptions, Encoder, Target};
use toolstream::provider::{DecodeOptions, Provider, StreamDecoder};
use toolstream::{Config, DiagnosticKind, Dialect, Event, FrameLimits};

use crate::common::{write_failed, Failure, LimitArgs, Size};
use crate::normalize::{DecodeNormalizeArgs, Stage};

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
    /// The model id: written into re-encoded output (default: the model the
    /// stream names), and used to pick the tool-call dialect when re-parsing
    /// content (`qwen…` → hermes, …; a model not in the routing table:
    /// auto-detection, with a warning).
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
    /// Maximum size of one SSE event or NDJSON line; a longer one is
    /// skipped with an error event.
    #[arg(long, value_name = "SIZE", default_value_t = Size(FrameLimits::default().max_frame_bytes))]
    pub max_frame_bytes: Size,
    #[command(flatten)]
    pub limits: LimitArgs,
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

/// Where the decoded events go: the event lines or calls object `parse`
/// prints, or another provider's wire format (the encoder made once the
/// first read shows the stream's model name).
enum Sink<W: Write> {
    Events(crate::EventSink<W>),
    Wire {
        out: W,
        target: Target,
        model: Option<String>,
        enc: Option<Box<Encoder>>,
        buf: Vec<u8>,
    },
}

impl<W: Write> Sink<W> {
    fn push(&mut self, events: &mut Vec<Event>, seen: &[u8], stage: &Stage) -> Result<(), Failure> {
        match self {
            Sink::Events(s) => s.push("decode", events, stage),
            Sink::Wire {
                out,
                target,
                model,
                enc,
                buf,
            } => {
                let enc = enc.get_or_insert_with(|| {
                    let model = model
                        .clone()
                        .or_else(|| source_model(seen))
                        .unwrap_or_else(|| "toolstream".into());
                    Box::new(Encoder::new(
                        *target,
                        EncodeOptions {
                            model,
                            ..EncodeOptions::default()
                        },
                    ))
                });
                for e in events.drain(..) {
                    crate::output::report("decode", &e);
                    enc.encode(&e, buf);
                }
                out.write_all(buf).map_err(write_failed)?;
                buf.clear();
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> Result<(), Failure> {
        match self {
            Sink::Events(s) => s.flush(),
            Sink::Wire { out, .. } => out.flush().map_err(write_failed),
        }
    }

    fn end(self, seen: &[u8], stage: &Stage) -> Result<(), Failure> {
        match self {
            Sink::Events(s) => s.end(stage),
            mut wire => {
                wire.push(&mut Vec::new(), seen, stage)?;
                let Sink::Wire {
                    mut out,
                    enc,
                    mut buf,
                    ..
                } = wire
                else {
                    return Ok(());
                };
                if let Some(mut enc) = enc {
                    enc.finish(&mut buf);
                }
                out.write_all(&buf).map_err(write_failed)?;
                out.flush().map_err(write_failed)
            }
        }
    }
}

/// The model the stream names in its first frames (`"model"` of an OpenAI
/// chunk or an Ollama line, Anthropic's `message.model`, Responses'
/// `response.model`, Gemini's `modelVersion`).
fn source_model(seen: &[u8]) -> Option<String> {
    for line in seen.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        let json = line
            .strip_prefix(b"data:")
            .map(<[u8]>::trim_ascii)
            .unwrap_or(line);
        if json.first() != Some(&b'{') {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(json) else {
            continue;
        };
        for m in [
            &v["model"],
            &v["message"]["model"],
            &v["response"]["model"],
            &v["modelVersion"],
        ] {
            if let Some(m) = m.as_str().filter(|m| !m.is_empty()) {
                return Some(m.to_owned());
            }
        }
    }
    None
}

/// The provider the first bytes of a stream look like, if any.
fn looks_like(seen: &[u8]) -> Option<Provider> {
    let mut d = StreamDecoder::new(DecodeOptions::default());
    let mut sink = Vec::new();
    d.feed(seen, &mut sink);
    d.finish(&mut sink);
    d.provider().filter(|_| {
        !sink.iter().any(|e| {
            matches!(
                e,
                Event::Diagnostic {
                    kind: DiagnosticKind::UnknownEvent,
                    ..
                }
            )
        })
    })
}

/// Whether `seen` (the start of the input) is framed as SSE or NDJSON at all.
fn is_a_stream(seen: &[u8]) -> bool {
    let start = seen.trim_ascii_start();
    let start = start.strip_prefix("\u{feff}".as_bytes()).unwrap_or(start);
    start.is_empty()
        || start.first() == Some(&b'{')
        || start.first() == Some(&b':')
        || [&b"data:"[..], b"event:", b"id:", b"retry:"]
            .iter()
            .any(|f| start.starts_with(f))
        // AWS eventstream: a binary prelude.
        || seen.len() >= 12 && seen[..4] != [0; 4] && !seen[..12].is_ascii()
}

/// Runs `toolstream decode`.
pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    let limits = args.limits.limits();
    let mut opts = DecodeOptions {
        provider: provider(args.from),
        config: Config::default().with_limits(limits.clone()),
        frame_limits: FrameLimits {
            max_frame_bytes: args.max_frame_bytes.0,
        },
        ..DecodeOptions::default()
    };
    if args.reparse_content {
        let dialects = args
            .model
            .as_deref()
            .map(|m| {
                let route = toolstream::model::route(m);
                if route.dialect_names.is_empty() {
                    crate::common::warn(
                        "decode",
                        format_args!("model `{m}` is not in the routing table; falling back to auto-detection over every dialect"),
                    );
                }
                dialects_for_model(m)
            })
            .unwrap_or_default();
        let in_reasoning = args
            .model
            .as_deref()
            .is_some_and(|m| toolstream::model::route(m).calls_in_reasoning);
        opts.reparse = Some(
            Config::default()
                .with_dialects(dialects)
                .with_calls_in_reasoning(in_reasoning)
                .with_limits(limits.clone()),
        );
    }
    let mut input = crate::common::open_input(args.file.as_deref())?;
    let stdout = BufWriter::new(io::stdout().lock());
    let wire = |target: Target| Sink::Wire {
        out: BufWriter::new(io::stdout().lock()),
        target,
        model: args.model.clone(),
        enc: None,
        buf: Vec::new(),
    };
    let mut sink = match args.output {
        Output::Events => Sink::Events(crate::EventSink::new(stdout, true)),
        Output::Calls => Sink::Events(crate::EventSink::new(stdout, false)),
        Output::Openai => wire(Target::OpenAi),
        Output::Anthropic => wire(Target::Anthropic),
        Output::Responses => wire(Target::Responses),
    };
    let tools = args
        .normalize
        .tools
        .as_deref()
        .filter(|_| args.normalize.normalize);
    let mut stage = Stage::new(tools, &args.normalize.switches).map_err(Failure::Usage)?;
    let mut dec = StreamDecoder::new(opts);
    let mut events = Vec::new();
    // The start of the input (at most one read's worth): what it looks like.
    let mut seen: Vec<u8> = Vec::new();
    // Whether anything was decoded: text, reasoning, a call or a finish
    // that is not the decoder's own truncation error.
    let mut decoded = false;
    let mut unknown = 0usize;
    let chunk = args
        .chunk_size
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let note = |events: &[Event], decoded: &mut bool, unknown: &mut usize| {
        for e in events {
            match e {
                Event::Text { .. } | Event::Thinking { .. } | Event::ToolStart { .. } => {
                    *decoded = true
                }
                Event::Finish { reason, .. } if *reason != toolstream::FinishReason::Error => {
                    *decoded = true
                }
                Event::Diagnostic {
                    kind: DiagnosticKind::UnknownEvent,
                    ..
                } => *unknown += 1,
                _ => {}
            }
        }
    };
    let over =
        crate::common::stream_input(
            &mut *input,
            chunk,
            limits.max_input_bytes,
            |piece| match piece {
                Some(piece) => {
                    if seen.len() < SEEN {
                        seen.extend_from_slice(&piece[..piece.len().min(SEEN - seen.len())]);
                    }
                    dec.feed(piece, &mut events);
                    note(&events, &mut decoded, &mut unknown);
                    stage.apply(&mut events);
                    sink.push(&mut events, &seen, &stage)
                }
                None => sink.flush(),
            },
        )?;
    dec.finish(&mut events);
    note(&events, &mut decoded, &mut unknown);
    if !decoded && !is_a_stream(&seen) {
        // Nothing to print but the decoder's complaints.
        return Err(Failure::Input(format!(
            "the input is neither SSE (`data: …` lines) nor NDJSON (one JSON object per line){}; \
             for raw model output use `toolstream parse`",
            start_of(&seen)
        )));
    }
    let given = provider(args.from);
    let hint = given.and_then(|g| looks_like(&seen).filter(|&p| p != g));
    stage.apply(&mut events);
    stage.finish(&mut events);
    sink.push(&mut events, &seen, &stage)?;
    sink.end(&seen, &stage)?;
    if let (Some(g), Some(p)) = (given, hint) {
        let message = format!(
            "--from {}: the input looks like {} (`--from {}`, or `--from auto`)",
            g.name(),
            p.name(),
            p.name()
        );
        if !decoded || unknown > 0 {
            return Err(Failure::Input(message));
        }
        crate::common::warn("decode", message);
    }
    if over {
        return Err(Failure::Input(format!(
            "max_input_bytes ({}) reached: the stream was read no further (raise --max-input-bytes)",
            Size(limits.max_input_bytes)
        )));
    }
    Ok(())
}

/// How much of the input is kept to say what it looks like.
const SEEN: usize = 64 << 10;

/// `" (it starts with …)"`: the input's first characters, for a message.
fn start_of(seen: &[u8]) -> String {
    let text = String::from_utf8_lossy(&seen[..seen.len().min(40)]);
    let text: String = text.chars().take(30).collect();
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(" (it starts with {text:?})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_dialects() {
        assert_eq!(dialects_for_model("Qwen/Qwen3-8B")[0], Dialect::Hermes);
        assert_eq!(dialects_for_model("qwen3:4b")[0], Dialect::Hermes);
        assert_eq!(
            dialects_for_model("NousResearch/Hermes-3-Llama-3.1-8B")[0],
            Dialect::Hermes
        );
        assert!(dialects_for_model("gpt-4o").is_empty());
    }
}
