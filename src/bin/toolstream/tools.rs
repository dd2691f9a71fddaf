//! `toolstream tools convert|adapt|simplify|audit|search`: tool lists
//! between providers, provider schema adapters, simplification for small
//! models, description audit and tool search.
//!
//! Data goes to standard output as JSON; what a conversion could not carry
//! over goes to standard error, one line per loss.

#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};
use toolstream::toolkit::adapt::Provider;
use toolstream::toolkit::convert::{read_tools, write_tools};
use toolstream::toolkit::planning::audit::audit;
use toolstream::toolkit::search::{select, SearchOptions};
use toolstream::toolkit::simplify::{simplify, Profile};
use toolstream::toolkit::{Tool, ToolFormat};

/// `toolstream tools`.
#[derive(clap::Args)]
pub struct ToolsArgs {
    #[command(subcommand)]
    command: ToolsCommand,
}

#[derive(clap::Subcommand)]
enum ToolsCommand {
    /// Convert a tool list (any format) to another provider's format.
    Convert {
        /// openai, responses, anthropic, gemini, ollama or mcp.
        #[arg(long)]
        to: String,
        /// The tool list (JSON; `-` for standard input).
        file: PathBuf,
    },
    /// Rewrite the schemas for a provider's rules.
    Adapt {
        /// openai-strict, gemini, anthropic or ollama.
        #[arg(long = "for")]
        target: String,
        /// The tool list (JSON; `-` for standard input).
        file: PathBuf,
    },
    /// Simplify the schemas for small models (seed 003's strategy).
    Simplify {
        /// qwen3-coder-30b, gpt-oss-20b, smollm2-135m, gemma-3-270m, small, medium, large, default or none.
        #[arg(long, default_value = "default")]
        profile: String,
        /// The profile for this model id instead of --profile.
        #[arg(long)]
        model: Option<String>,
        /// Output format (openai, responses, anthropic, gemini, ollama, mcp).
        #[arg(long, default_value = "openai")]
        to: String,
        /// The tool list (JSON; `-` for standard input).
        file: PathBuf,
    },
    /// Audit the tool descriptions (JSON report with a fix per finding).
    Audit {
        /// Also check the tool count against this model's size class.
        #[arg(long)]
        model: Option<String>,
        /// Extra model registry entries (TOML or JSON).
        #[arg(long)]
        models: Option<PathBuf>,
        /// The tool list (JSON; `-` for standard input).
        file: PathBuf,
    },
    /// Rank the tools against a query and select those to send.
    Search {
        /// The query (the conversation's last user turn).
        #[arg(long)]
        query: String,
        /// The most tools to keep.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Token budget for the tool definitions.
        #[arg(long)]
        budget: Option<usize>,
        /// The budget from this model's context window (a fifth of it).
        #[arg(long)]
        model: Option<String>,
        /// Tools always kept (comma-separated).
        #[arg(long, value_delimiter = ',')]
        always: Vec<String>,
        /// The tool list (JSON; `-` for standard input).
        file: PathBuf,
    },
}

/// Reads a tool list in any format; errors name the file, tool and field.
pub fn read_tool_file(p: &Path) -> Result<Vec<Tool>, String> {
    let text = if p == Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?
    };
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))?;
    read_tools(&v).map_err(|e| format!("{}: {e}", p.display()))
}

fn format_arg(s: &str) -> Result<ToolFormat, String> {
    ToolFormat::from_name(s).ok_or_else(|| {
        format!("unknown format `{s}` (openai, responses, anthropic, gemini, ollama, mcp)")
    })
}

fn print(v: &Value) -> ExitCode {
    match serde_json::to_string_pretty(v) {
        Ok(s) => emit(&format!("{s}\n")),
        Err(e) => crate::fail(e),
    }
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an
/// error.
pub fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => crate::fail(format!("cannot write output: {e}")),
    }
}

fn report_losses<L: serde::Serialize>(losses: &[L]) {
    for l in losses {
        if let Ok(s) = serde_json::to_string(l) {
            eprintln!("toolstream: loss: {s}");
        }
    }
}

/// Runs `toolstream tools`.
pub fn run(args: &ToolsArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => crate::fail(e),
    }
}

fn run_inner(args: &ToolsArgs) -> Result<ExitCode, String> {
    match &args.command {
        ToolsCommand::Convert { to, file } => {
            let f = format_arg(to)?;
            let tools = read_tool_file(file)?;
            let (out, losses) = write_tools(&tools, f);
            report_losses(&losses);
            Ok(print(&out))
        }
        ToolsCommand::Adapt { target, file } => {
            let p = Provider::from_name(target).ok_or_else(|| {
                format!("unknown adapter `{target}` (openai-strict, gemini, anthropic, ollama)")
            })?;
            let mut tools = read_tool_file(file)?;
            let mut losses = Vec::new();
            for t in &mut tools {
                let a = p.adapt_schema(&t.parameters);
                for l in a.losses {
                    losses.push(json!({"tool": t.name, "field": format!("parameters{}", l.path), "reason": l.reason}));
                }
                t.parameters = a.schema;
                if p == Provider::OpenAiStrict {
                    t.strict = Some(true);
                }
            }
            let f = match p {
                Provider::OpenAiStrict => ToolFormat::OpenAi,
                Provider::Gemini => ToolFormat::Gemini,
                Provider::Anthropic => ToolFormat::Anthropic,
                Provider::Ollama => ToolFormat::Ollama,
            };
            // Gemini: the schemas are already adapted; write them as they are.
            let out = if f == ToolFormat::Gemini {
                json!([{"functionDeclarations": tools.iter().map(|t| {
                    let mut d = json!({"name": t.name, "parameters": t.parameters});
                    if let Some(desc) = &t.description { d["description"] = json!(desc); }
                    d
                }).collect::<Vec<_>>()}])
            } else {
                let (out, more) = write_tools(&tools, f);
                losses.extend(more.into_iter().map(|l| json!(l)));
                out
            };
            report_losses(&losses);
            Ok(print(&out))
        }
        ToolsCommand::Simplify {
            profile,
            model,
            to,
            file,
        } => {
            let f = format_arg(to)?;
            let profile = match model {
                Some(m) => Profile::for_model(&crate::models::registry(None)?.lookup(m)),
                None => Profile::named(profile).ok_or_else(|| {
                    format!(
                        "unknown profile `{profile}` ({})",
                        Profile::NAMES.join(", ")
                    )
                })?,
            };
            let tools = read_tool_file(file)?;
            let mut out_tools = Vec::new();
            for t in &tools {
                let s = simplify(t, &profile.options);
                for c in &s.changes {
                    let field = if c.path.starts_with('.') {
                        format!("parameters{}", c.path)
                    } else {
                        c.path.clone()
                    };
                    eprintln!(
                        "toolstream: {} ({}): {field}: {}",
                        t.name, profile.name, c.reason
                    );
                }
                out_tools.push(s.tool);
            }
            let (out, losses) = write_tools(&out_tools, f);
            report_losses(&losses);
            Ok(print(&out))
        }
        ToolsCommand::Audit {
            model,
            models,
            file,
        } => {
            let tools = read_tool_file(file)?;
            let info = match model {
                Some(m) => Some(crate::models::registry(models.as_deref())?.lookup(m)),
                None => None,
            };
            let r = audit(&tools, info.as_ref());
            Ok(print(&serde_json::to_value(&r).map_err(|e| e.to_string())?))
        }
        ToolsCommand::Search {
            query,
            top,
            budget,
            model,
            always,
            file,
        } => {
            let tools = read_tool_file(file)?;
            let mut opts = SearchOptions {
                max_tools: *top,
                send_all_up_to: (*top).min(20),
                always: always.clone(),
                ..SearchOptions::default()
            };
            if let Some(m) = model {
                if let Some(cw) = crate::models::registry(None)?
                    .lookup(m)
                    .capabilities
                    .context_window
                {
                    opts = opts.with_context_window(cw);
                }
            }
            if budget.is_some() {
                opts.budget_tokens = *budget;
            }
            let s = select(&tools, query, &[], None, &opts);
            let kept: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
            Ok(print(&json!({
                "kept": kept,
                "ranked": s.ranked.iter().map(|(n, sc)| json!({"name": n, "score": (sc * 1000.0).round() / 1000.0})).collect::<Vec<_>>(),
                "pinned": s.pinned,
                "shortened": s.shortened,
                "dropped": s.dropped,
                "tokens": s.tokens,
                "budget": s.budget,
                "over_budget": s.over_budget,
            })))
        }
    }
}
