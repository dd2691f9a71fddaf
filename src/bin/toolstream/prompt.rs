//! `toolstream prompt`: the emulation prompt for a tool list (for models
//! without native tool calling).

#![allow(unreachable_pub)]

use std::path::PathBuf;
use std::process::ExitCode;

use toolstream::toolkit::adapt::ToolChoice;
use toolstream::toolkit::prompt::{render, PromptOptions};
use toolstream::toolkit::search::{select, SearchOptions};
use toolstream::toolkit::{EmulationFormat, SizeClass};

/// `toolstream prompt`.
#[derive(clap::Args)]
pub struct PromptArgs {
    /// The tool list (JSON, any provider format).
    #[arg(long)]
    tools: PathBuf,
    /// json, compact, parallel or xml (default: the model's, else json).
    #[arg(long)]
    format: Option<String>,
    /// The model id: picks the format, size class and context budget.
    #[arg(long, conflicts_with = "size")]
    model: Option<String>,
    /// small, medium or large (default: medium).
    #[arg(long)]
    size: Option<String>,
    /// Rank the tools against this query and keep those that fit.
    #[arg(long)]
    query: Option<String>,
    /// Token budget for the tool definitions (with --query).
    #[arg(long)]
    budget: Option<usize>,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    tool_choice: String,
    /// Extra model registry entries (TOML or JSON).
    #[arg(long)]
    models: Option<PathBuf>,
}

/// Runs `toolstream prompt`.
pub fn run(args: &PromptArgs) -> ExitCode {
    match run_inner(args) {
        Ok(text) => crate::tools::emit(&text),
        Err(e) => crate::fail(e),
    }
}

fn run_inner(args: &PromptArgs) -> Result<String, String> {
    let mut tools = crate::tools::read_tool_file(&args.tools)?;
    let info = match &args.model {
        Some(m) => Some(crate::models::registry(args.models.as_deref())?.lookup(m)),
        None => None,
    };
    let size = match (&args.size, &info) {
        (Some(s), _) => SizeClass::from_name(s)
            .ok_or_else(|| format!("unknown size `{s}` (small, medium, large)"))?,
        (None, Some(m)) => m.size_class,
        (None, None) => SizeClass::Medium,
    };
    let format = match (&args.format, &info) {
        (Some(f), _) => EmulationFormat::from_name(f)
            .ok_or_else(|| format!("unknown format `{f}` (json, compact, parallel, xml)"))?,
        (None, Some(m)) => m.emulation,
        (None, None) => EmulationFormat::Json,
    };
    let choice = ToolChoice::from_value(&serde_json::Value::String(args.tool_choice.clone()))
        .ok_or_else(|| format!("bad --tool-choice `{}`", args.tool_choice))?;
    if let ToolChoice::Tool(n) = &choice {
        if !tools.iter().any(|t| &t.name == n) {
            return Err(format!(
                "--tool-choice names `{n}`, which is not in {}",
                args.tools.display()
            ));
        }
    }
    if let Some(q) = &args.query {
        let mut opts = SearchOptions::default();
        if let Some(cw) = info.as_ref().and_then(|m| m.capabilities.context_window) {
            opts = opts.with_context_window(cw);
        }
        if args.budget.is_some() {
            opts.budget_tokens = args.budget;
        }
        let named = match &choice {
            ToolChoice::Tool(n) => Some(n.as_str()),
            _ => None,
        };
        let s = select(&tools, q, &[], named, &opts);
        if !s.dropped.is_empty() {
            eprintln!(
                "toolstream: {} tools dropped for the budget: {}",
                s.dropped.len(),
                s.dropped.join(", ")
            );
        }
        tools = s.tools;
    }
    Ok(render(
        &tools,
        &PromptOptions::new(format, size).with_tool_choice(choice),
    ))
}
