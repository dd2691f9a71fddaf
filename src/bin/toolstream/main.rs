//! The `toolstream` command-line tool.
//!
//! Temporary entry point of the `codec` branch: it wires only `decode`. The
//! lead's `main.rs` (with `parse` and `repair`) replaces it at merge time and
//! adds `Decode(decode::DecodeArgs) => decode::run(&args)`.

mod decode;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Streamed LLM output to typed tool-call events.
#[derive(Debug, Parser)]
#[command(name = "toolstream", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode a provider stream (SSE / NDJSON / eventstream) into events,
    /// calls or another provider's wire format.
    Decode(decode::DecodeArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Decode(args) => decode::run(&args),
    }
}
