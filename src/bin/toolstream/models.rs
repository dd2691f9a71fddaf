//! `toolstream models show ID`: what the capability registry knows of a
//! model id, and which table entries said so.

#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolstream::toolkit::Registry;

/// `toolstream models`.
#[derive(clap::Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    command: ModelsCommand,
}

#[derive(clap::Subcommand)]
enum ModelsCommand {
    /// Print what the registry says of a model id (JSON): family, version,
    /// size, capabilities, dialects, emulation format, and the entries that
    /// matched.
    Show {
        /// The model id (`gpt-4o`, `ollama/qwen3:32b`, `Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf`, …).
        id: String,
        /// A TOML or JSON file of extra registry entries (applied after the built-in ones).
        #[arg(long)]
        models: Option<PathBuf>,
    },
}

/// The registry with the entries of `file` added.
pub fn registry(file: Option<&Path>) -> Result<Registry, String> {
    let mut r = Registry::builtin();
    if let Some(p) = file {
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let format = p
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let format = match format.as_deref() {
            Some("toml") => Some("toml"),
            Some("json") => Some("json"),
            _ => None,
        };
        r.extend_from_str(&text, format)
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(r)
}

/// Runs `toolstream models`.
pub fn run(args: &ModelsArgs) -> ExitCode {
    match &args.command {
        ModelsCommand::Show { id, models } => {
            let reg = match registry(models.as_deref()) {
                Ok(r) => r,
                Err(e) => return crate::fail(e),
            };
            let info = reg.lookup(id);
            match serde_json::to_string_pretty(&info) {
                Ok(s) => crate::tools::emit(&format!("{s}\n")),
                Err(e) => crate::fail(e),
            }
        }
    }
}
