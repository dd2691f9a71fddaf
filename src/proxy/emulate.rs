//! Emulated tool calling: for upstream models without native tools (or
//! whose chat template drops them), the proxy removes the tools from the
//! upstream request, puts the toolkit's emulation prompt in the system
//! message, renders earlier calls and results as text, constrains the
//! output where the upstream can ([`crate::toolkit::constrain`]), and
//! parses the calls back out of the streamed text with the dialect of the
//! prompt's format — the client receives native tool calls.
//!
//! ```text
//! client request (Chat after translation)
//!   tools ──▶ tool cut (BM25 on the last user turn) ──▶ prompt (format × size class) ──▶ system message
//!         └─▶ constraint (GBNF `grammar`, lazy where the server has it) ──▶ request fields
//!   assistant tool_calls / tool results ──▶ text in the prompt's own call format
//! upstream text ──▶ parser (the format's dialect) ──▶ [echo filter] ──▶ native calls
//! ```
//!
//! What is done for a model is decided once, at start-up
//! ([`EmulateSetup::for_model`]): the registry's size class and emulation
//! format, the upstream server found by [`probe_server`], and whether the
//! prompt goes in the system message or leads the first user turn
//! ([`super::probe`], [`EmulateSetup::place_system`]). `auto` mode
//! ([`choose_mode`]) emulates for models the registry says have no native
//! tools.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use super::config::Mode;
use super::error::ProxyError;
use super::probe::{ProbeError, SystemProbe, SystemRole};
use super::session::CallStage;
use crate::config::{Config, ToolSpec, Tools};
use crate::event::{Delta, Event};
use crate::model::ModelSpec;
use crate::toolkit::adapt::{ResultContent, ToolChoice, ToolResult};
use crate::toolkit::constrain::{constrain, request_spans, ConstrainOptions, Server};
use crate::toolkit::convert::read_tools;
use crate::toolkit::prompt::{example_calls, render, render_calls, render_naive, PromptOptions};
use crate::toolkit::registry::{EmulationDefaults, ModelInfo, Registry};
use crate::toolkit::search::{last_user_text, select, used_tools, SearchOptions};
use crate::toolkit::{EmulationFormat, SizeClass, Tool};

/// Overrides of the registry's emulation defaults (the config file's
/// `[emulate]` table); every field unset keeps the measured default.
///
/// ```toml
/// [emulate]
/// format = "compact"      # json | compact | parallel | xml
/// max_tools = 5           # tools offered in the prompt (the rest cut by tool search)
/// constrain = true        # send a grammar where the upstream takes one
/// optional_params = false # the grammar admits optional parameters
/// copy_values = true      # tell the model to copy the user's values
/// echo_filter = true      # a call repeating the prompt's example becomes text
/// two_step = false        # pick the tool by name first, then its arguments
/// rank_tools = false      # offer the tools best match first
/// copy_spans = 0          # string values: spans of the user's turn of up to N words (0: any)
/// system_in_user = true   # the prompt leads the first user turn (default: start-up probe, else registry)
/// retries = 1             # validation retries (at most `[retries] validation`)
/// size = "small"          # the size class's prompt and defaults (default: the registry's)
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmulateConfig {
    /// The prompt's call format.
    pub format: Option<EmulationFormat>,
    /// Tools offered in the prompt at most.
    pub max_tools: Option<usize>,
    /// Constrain the output with a grammar where the upstream takes one.
    pub constrain: Option<bool>,
    /// Admit optional parameters in the grammar.
    pub optional_params: Option<bool>,
    /// Tell the model to copy the user's values.
    pub copy_values: Option<bool>,
    /// Show an example call in the prompt.
    pub example: Option<bool>,
    /// Turn calls that repeat the prompt's example into text.
    pub echo_filter: Option<bool>,
    /// Serve `auto` right after a user turn as `required`.
    pub auto_as_required: Option<bool>,
    /// Two-step decoding: the tool's name first (constrained to the
    /// offered names), then its arguments under its schema alone.
    pub two_step: Option<bool>,
    /// Validation retries of emulated requests (at most the proxy's
    /// `[retries] validation`).
    pub retries: Option<u32>,
    /// The size class whose prompt wording and defaults apply (default:
    /// the registry's for the model).
    pub size: Option<SizeClass>,
    /// Offer the tools best match first (tool search's ranking against the
    /// last user turn, also when all are sent).
    pub rank_tools: Option<bool>,
    /// RFC-136's placeholder prompt instead of ours (#40's naive baseline;
    /// for the evaluation).
    pub naive_prompt: Option<bool>,
    /// Copy constraint: right after a user turn, string values are spans
    /// of that turn of up to this many words (0: any string).
    pub copy_spans: Option<usize>,
    /// Send the system prompt as the start of the first user turn instead
    /// of a system message. Unset: decided at start-up — by the probe of
    /// the upstream's template ([`super::probe`]) where the server is one
    /// the proxy recognises, else by the registry (Gemma 1–3 have no
    /// system role). Gemma 3's own template folds a system message into
    /// the first user turn; llama-cpp-python's `gemma` chat format instead
    /// drops it, and with it the emulation prompt.
    pub system_in_user: Option<bool>,
}

/// Why the emulation prompt is where it is: in the system message, or at
/// the start of the first user turn ([`EmulateSetup::system_in_user`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SystemPlacement {
    /// `[emulate] system_in_user` in the configuration.
    Config,
    /// The start-up probe of the upstream's chat template.
    Probe(SystemProbe),
    /// The registry's rule for the model's family
    /// ([`crate::model::ModelSpec::system_role`]), with why the probe did
    /// not decide (`None`: not probed — the upstream was not reachable or
    /// not a server the proxy recognises).
    Registry(Option<String>),
}

impl std::fmt::Display for SystemPlacement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SystemPlacement::Config => f.write_str("[emulate] system_in_user"),
            SystemPlacement::Probe(p) => write!(f, "start-up probe: {p}"),
            SystemPlacement::Registry(None) => {
                f.write_str("registry: the model family's system role (not probed)")
            }
            SystemPlacement::Registry(Some(e)) => write!(
                f,
                "registry: the model family's system role (probe failed: {e})"
            ),
        }
    }
}

/// How requests to one upstream model are emulated (fixed at start-up).
#[derive(Clone, Debug, PartialEq)]
pub struct EmulateSetup {
    /// The call format the prompt asks for.
    pub format: EmulationFormat,
    /// The size class the prompt's wording is for.
    pub size: SizeClass,
    /// The registry's per-size-class defaults in force.
    pub defaults: EmulationDefaults,
    /// The server the constraint is written for (`None`: no constraint).
    pub constraint: Option<Server>,
    /// Calls repeating the prompt's example become text.
    pub echo_filter: bool,
    /// The system prompt leads the first user turn (no system message).
    pub system_in_user: bool,
    /// Why [`EmulateSetup::system_in_user`] is what it is.
    pub system_placement: SystemPlacement,
}

impl EmulateSetup {
    /// The setup for a model (registry entry) behind an upstream server
    /// (`None`: unknown, no constraint).
    pub fn for_model(
        info: &ModelInfo,
        server: Option<Server>,
        over: &EmulateConfig,
    ) -> EmulateSetup {
        let size = over.size.unwrap_or(info.size_class);
        let mut defaults = EmulationDefaults::for_size(size);
        if let Some(f) = over.format {
            defaults.format = Some(f);
        }
        if let Some(n) = over.max_tools {
            defaults.max_tools = n.max(1);
        }
        if let Some(b) = over.constrain {
            defaults.constrain = b;
        }
        if let Some(b) = over.optional_params {
            defaults.optional_params = b;
        }
        if let Some(b) = over.copy_values {
            defaults.copy_values = b;
        }
        if let Some(b) = over.example {
            defaults.example = b;
        }
        if let Some(b) = over.auto_as_required {
            defaults.auto_as_required = b;
        }
        if let Some(b) = over.two_step {
            defaults.two_step = b;
        }
        if let Some(n) = over.retries {
            defaults.retries = n;
        }
        if let Some(b) = over.rank_tools {
            defaults.rank_tools = b;
        }
        if let Some(b) = over.naive_prompt {
            defaults.naive_prompt = b;
        }
        if let Some(n) = over.copy_spans {
            defaults.copy_spans = n;
        }
        let format = defaults.format.unwrap_or(info.emulation);
        EmulateSetup {
            format,
            size,
            constraint: if defaults.constrain { server } else { None },
            echo_filter: over.echo_filter.unwrap_or(true),
            system_in_user: over
                .system_in_user
                .unwrap_or_else(|| !ModelSpec::parse(&info.id).system_role()),
            system_placement: if over.system_in_user.is_some() {
                SystemPlacement::Config
            } else {
                SystemPlacement::Registry(None)
            },
            defaults,
        }
    }

    /// Takes the start-up probe's finding of whether the upstream's
    /// template shows the model a system message: dropped → the prompt
    /// leads the first user turn. The configuration's
    /// `[emulate] system_in_user` wins over the probe; a failed probe
    /// leaves the registry's rule in force.
    pub fn place_system(&mut self, probed: Result<SystemProbe, ProbeError>) {
        if self.system_placement == SystemPlacement::Config {
            return;
        }
        match probed {
            Ok(p) => {
                self.system_in_user = p.role == SystemRole::Dropped;
                self.system_placement = SystemPlacement::Probe(p);
            }
            Err(e) => self.system_placement = SystemPlacement::Registry(Some(e.to_string())),
        }
    }

    /// Two-step decoding is on (it needs a constraint).
    pub fn two_step(&self) -> bool {
        self.defaults.two_step && self.constraint.is_some()
    }

    /// The validation retries of an emulated request, given the proxy's
    /// `[retries] validation` (the smaller of the two).
    pub fn retries(&self, configured: u32) -> u32 {
        self.defaults.retries.min(configured)
    }

    /// One line for the start-up banner.
    pub fn describe(&self) -> String {
        format!(
            "emulate: {} prompt for {} models, up to {} tools{}, {}{}",
            self.format,
            self.size,
            self.defaults.max_tools,
            if self.defaults.optional_params {
                ""
            } else {
                ", required parameters only"
            },
            match self.constraint {
                Some(s) => format!("constrained by a grammar ({})", s.name()),
                None => "unconstrained".to_string(),
            },
            if self.two_step() {
                "; two-step: the tool's name, then its arguments"
            } else {
                ""
            }
        ) + &format!(
            "; prompt in the {} ({})",
            if self.system_in_user {
                "first user turn"
            } else {
                "system message"
            },
            self.system_placement
        )
    }
}

/// The mode `auto` resolves to for a model: `native` when the registry
/// says it calls tools natively, else `emulate`.
pub fn choose_mode(info: &ModelInfo) -> Mode {
    if info.capabilities.native_tools {
        Mode::Native
    } else {
        Mode::Emulate
    }
}

/// The registry entry of an upstream model id.
pub fn lookup(model: &str) -> ModelInfo {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin).lookup(model)
}

/// Asks the upstream which server it is (once, at start-up): llama.cpp's
/// `llama-server` answers `GET /props`; llama-cpp-python lists its models
/// as `owned_by: "me"`; vLLM as `owned_by: "vllm"`; Ollama answers
/// `GET /api/version`. `None` when none of these holds (no constraint is
/// sent to a server that might reject it).
pub async fn probe_server(base: &str) -> Option<Server> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let get = |path: &str| {
        let url = format!("{base}{path}");
        let c = client.clone();
        async move {
            let r = c.get(url).send().await.ok()?;
            if !r.status().is_success() {
                return None;
            }
            r.json::<Value>().await.ok()
        }
    };
    if let Some(p) = get("/props").await {
        if p.get("default_generation_settings").is_some() || p.get("chat_template").is_some() {
            return Some(Server::LlamaServer);
        }
    }
    if let Some(m) = get("/v1/models").await {
        let owners: Vec<&str> = m
            .get("data")
            .and_then(Value::as_array)
            .map(|d| {
                d.iter()
                    .filter_map(|x| x.get("owned_by").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        if owners.contains(&"me") {
            return Some(Server::LlamaCppPython);
        }
        if owners.contains(&"vllm") {
            return Some(Server::Vllm);
        }
        if owners.contains(&"llamacpp") {
            return Some(Server::LlamaServer);
        }
    }
    if get("/api/version").await.is_some() {
        return Some(Server::Ollama);
    }
    None
}

/// What [`rewrite`] did to a request.
#[derive(Clone, Debug, Default)]
pub struct Rewritten {
    /// The parser configuration for the reply (`None`: no tools to call).
    pub parse: Option<Config>,
    /// The tools offered in the prompt (after the cut).
    pub offered: Vec<String>,
    /// The tools cut from the prompt.
    pub dropped: Vec<String>,
    /// The example calls the prompt shows (for the echo filter).
    pub examples: Vec<(String, Value)>,
    /// A constraint was sent.
    pub constrained: bool,
}

fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn read_request_tools(v: Option<&Value>) -> Result<Vec<Tool>, ProxyError> {
    match v {
        Some(v @ Value::Array(_)) => read_tools(v)
            .map_err(|e| ProxyError::BadRequest(format!("cannot read the request's tools: {e}"))),
        _ => Ok(Vec::new()),
    }
}

/// The request's `tool_choice` as emulation serves it: `auto` right after
/// a user turn becomes `required` where the size class says so.
fn served_choice(body: &Map<String, Value>, setup: &EmulateSetup) -> ToolChoice {
    let choice = body
        .get("tool_choice")
        .and_then(ToolChoice::from_value)
        .unwrap_or(ToolChoice::Auto);
    let after_user = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        == Some("user");
    if choice == ToolChoice::Auto && setup.defaults.auto_as_required && after_user {
        ToolChoice::Required
    } else {
        choice
    }
}

/// Emulation serves the client's `auto` as `required` for this request
/// (the size class's `auto_as_required`, right after a user turn): a reply
/// with no call then misses what the model was asked for, and a validation
/// retry asks again, as for a client's own `required`.
pub fn auto_served_as_required(body: &Map<String, Value>, setup: &EmulateSetup) -> bool {
    let client = body
        .get("tool_choice")
        .and_then(ToolChoice::from_value)
        .unwrap_or(ToolChoice::Auto);
    client == ToolChoice::Auto && served_choice(body, setup) == ToolChoice::Required
}

/// The tools the prompt offers: the request's, cut by tool search to the
/// size class's number (tools named by `tool_choice` or used earlier kept).
fn offered_tools(
    tools: &[Tool],
    messages: &Value,
    choice: &ToolChoice,
    setup: &EmulateSetup,
) -> crate::toolkit::search::Selection {
    let named = match choice {
        ToolChoice::Tool(n) => Some(n.as_str()),
        _ => None,
    };
    let query = last_user_text(messages);
    let used = used_tools(messages);
    let opts = SearchOptions {
        send_all_up_to: setup.defaults.max_tools,
        max_tools: setup.defaults.max_tools,
        rank_order: setup.defaults.rank_tools,
        ..SearchOptions::default()
    };
    select(tools, &query, &used, named, &opts)
}

/// Rewrites a translated Chat Completions body for emulation: tools out,
/// prompt and transcript in, constraint fields added.
pub fn rewrite(
    body: &mut Map<String, Value>,
    setup: &EmulateSetup,
) -> Result<Rewritten, ProxyError> {
    rewrite_for(body, setup, None)
}

/// [`rewrite`], with the tool already picked by two-step decoding's first
/// step ([`NameStep`]): only that tool is offered, and its call is required.
pub fn rewrite_for(
    body: &mut Map<String, Value>,
    setup: &EmulateSetup,
    picked: Option<&str>,
) -> Result<Rewritten, ProxyError> {
    let user = body.get("messages").and_then(copy_source);
    rewrite_copying(body, setup, picked, user.as_deref())
}

/// The user's turn a copy constraint takes its spans from: the last
/// message, when it is the user's own text (not tool results). After a
/// tool result the model may need values from it, so strings stay free.
pub fn copy_source(messages: &Value) -> Option<String> {
    let last = messages.as_array()?.last()?;
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let text = last_user_text(&Value::Array(vec![last.clone()]));
    (!text.trim().is_empty()).then_some(text)
}

/// Most spans a copy constraint offers (see
/// [`crate::toolkit::constrain::request_spans`]): bounds the grammar of a
/// long user turn.
pub const MAX_COPY_SPANS: usize = 1500;

/// [`rewrite_for`] with the copy constraint's source given: `user` is the
/// user turn whose spans string values may take (`None`: no copy
/// constraint). A validation retry passes the client's own last turn, not
/// the retry's feedback message.
pub fn rewrite_copying(
    body: &mut Map<String, Value>,
    setup: &EmulateSetup,
    picked: Option<&str>,
    user: Option<&str>,
) -> Result<Rewritten, ProxyError> {
    let mut choice = served_choice(body, setup);
    let mut tools = read_request_tools(body.remove("tools").as_ref())?;
    body.remove("tool_choice");
    body.remove("parallel_tool_calls");
    if let Some(name) = picked {
        if tools.iter().any(|t| t.name == name) {
            tools.retain(|t| t.name == name);
            choice = ToolChoice::Tool(name.to_string());
        }
    }
    let messages = body.remove("messages").unwrap_or(Value::Array(Vec::new()));
    let format = setup.format;
    let mut out = Rewritten::default();
    let mut prompt = String::new();
    if !tools.is_empty() && choice != ToolChoice::None {
        let sel = offered_tools(&tools, &messages, &choice, setup);
        out.dropped = sel.dropped.clone();
        let offered: Vec<Tool> = sel.tools;
        let mut popts = PromptOptions::new(format, setup.size).with_tool_choice(choice.clone());
        popts.example = setup.defaults.example;
        if setup.defaults.naive_prompt {
            prompt = render_naive(&offered);
        } else {
            prompt = render(&offered, &popts);
            if setup.defaults.copy_values {
                prompt.push_str(
                    "Copy the values (commands, paths, names, dates) from the user's request; do not copy the example's values.\n",
                );
            }
            if popts.example {
                out.examples = example_calls(&offered, &choice, format);
            }
        }
        out.offered = offered.iter().map(|t| t.name.clone()).collect();
        if let Some(server) = setup.constraint {
            let mut copts = ConstrainOptions::new(format, choice.clone());
            copts.optional = setup.defaults.optional_params;
            copts.max_string = Some(setup.defaults.max_string);
            if let (Some(u), n @ 1..) = (user, setup.defaults.copy_spans) {
                copts.spans = request_spans(u, n, MAX_COPY_SPANS);
            }
            if let Ok(c) = constrain(&offered, &copts) {
                log_unexpressed(&c.unexpressed);
                out.constrained = c.apply(server, body);
            }
        }
        let specs: Vec<ToolSpec> = offered
            .iter()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                parameters: Some(t.parameters.clone()),
            })
            .collect();
        out.parse = Some(
            Config::default()
                .with_dialects(vec![format.dialect()])
                .with_tools(Tools::new(specs)),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(transcript(&messages, format, &prompt, setup.system_in_user)),
    );
    Ok(out)
}

/// Two-step decoding's first step: a request that asks the model which of
/// the offered tools the conversation needs, its output constrained to
/// one of their names (a list of names with one-line descriptions, no
/// schemas). The proxy sends it, reads the name ([`NameStep::pick`]) and
/// then sends [`rewrite_for`] with that tool alone.
#[derive(Clone, Debug, PartialEq)]
pub struct NameStep {
    /// The Chat Completions body of the first step (not streamed).
    pub body: Map<String, Value>,
    /// The names it may answer.
    pub names: Vec<String>,
}

/// Longest one-line description in the first step's list, in characters.
const NAME_STEP_DESCRIPTION: usize = 80;
/// Output tokens the first step may spend on a name.
const NAME_STEP_MAX_TOKENS: u64 = 48;

/// The first step for a request, when two-step decoding applies: it is on
/// for the setup, a constraint can be sent, a call is required (after the
/// size class's `auto` rule) without naming the tool, and the cut leaves at
/// least two tools. `None` otherwise (the request is served in one step).
pub fn name_step(body: &Map<String, Value>, setup: &EmulateSetup) -> Option<NameStep> {
    let server = setup.constraint?;
    if !setup.two_step() || served_choice(body, setup) != ToolChoice::Required {
        return None;
    }
    let tools = read_request_tools(body.get("tools")).ok()?;
    let messages = body
        .get("messages")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let sel = offered_tools(&tools, &messages, &ToolChoice::Required, setup);
    if sel.tools.len() < 2 {
        return None;
    }
    let names: Vec<String> = sel.tools.iter().map(|t| t.name.clone()).collect();
    let mut prompt = String::from("Tools:\n");
    for t in &sel.tools {
        let first = t.description().lines().next().unwrap_or("");
        let d = crate::toolkit::simplify::shorten(first, NAME_STEP_DESCRIPTION);
        if d.is_empty() {
            prompt.push_str(&format!("- {}\n", t.name));
        } else {
            prompt.push_str(&format!("- {}: {}\n", t.name, d));
        }
    }
    prompt.push_str(
        "Which one tool does the user's request need? Reply with the tool's name only.\n",
    );
    let mut step = Map::new();
    for k in ["model", "temperature", "top_p", "top_k", "min_p", "seed"] {
        if let Some(v) = body.get(k) {
            step.insert(k.into(), v.clone());
        }
    }
    step.insert(
        "messages".into(),
        Value::Array(transcript(
            &messages,
            setup.format,
            &prompt,
            setup.system_in_user,
        )),
    );
    step.insert("stream".into(), Value::Bool(false));
    step.insert("max_tokens".into(), Value::from(NAME_STEP_MAX_TOKENS));
    let grammar = crate::toolkit::constrain::name_grammar(&names);
    match server {
        Server::LlamaServer | Server::LlamaCppPython => {
            step.insert("grammar".into(), Value::String(grammar));
        }
        Server::Vllm => {
            step.insert(
                "guided_choice".into(),
                Value::Array(names.iter().cloned().map(Value::String).collect()),
            );
        }
        Server::Ollama => {
            step.insert(
                "format".into(),
                serde_json::json!({"type": "string", "enum": names}),
            );
        }
    }
    Some(NameStep { body: step, names })
}

impl NameStep {
    /// The name a first-step reply (a Chat Completions JSON body) picked:
    /// its content, trimmed of blanks and quotes, equal to an offered
    /// name (else equal ignoring case). `None` when it names none.
    pub fn pick(&self, reply: &[u8]) -> Option<String> {
        let v: Value = serde_json::from_slice(reply).ok()?;
        let text = v.pointer("/choices/0/message/content")?.as_str()?;
        let text = text.trim().trim_matches('"').trim();
        self.names
            .iter()
            .find(|n| n.as_str() == text)
            .or_else(|| self.names.iter().find(|n| n.eq_ignore_ascii_case(text)))
            .cloned()
    }

    /// Sends the first step upstream and reads the picked name; `None`
    /// (logged) when the upstream fails or names no offered tool — the
    /// request is then served in one step.
    pub async fn run(
        &self,
        upstream: &super::upstream::Upstream,
        key: Option<&str>,
    ) -> Option<String> {
        use futures_util::StreamExt;
        /// A first-step reply is a name; more than this is not read.
        const MAX_REPLY: usize = 1 << 20;
        let mut bytes = match upstream.chat(&self.body, key).await {
            Ok(b) => b,
            Err(e) => {
                tracing::info!(error = %e, "two-step: the name request failed; one step instead");
                return None;
            }
        };
        let mut reply = Vec::new();
        while let Some(chunk) = bytes.next().await {
            match chunk {
                Ok(c) if reply.len() + c.len() <= MAX_REPLY => reply.extend_from_slice(&c),
                _ => return None,
            }
        }
        let picked = self.pick(&reply);
        match &picked {
            Some(n) => tracing::debug!(tool = %n, "two-step: tool picked"),
            None => tracing::info!("two-step: the reply names no offered tool; one step instead"),
        }
        picked
    }
}

/// The messages with the prompt in the system message, calls and results
/// as text (roles the plainest templates know: system, user, assistant).
/// With `system_in_user`, the system text leads the first user turn (a
/// user turn of its own when there is none).
fn transcript(
    messages: &Value,
    format: EmulationFormat,
    prompt: &str,
    system_in_user: bool,
) -> Vec<Value> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut system: Vec<String> = Vec::new();
    let mut rest: Vec<(String, String)> = Vec::new();
    for m in messages.as_array().into_iter().flatten() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let text = content_text(m.get("content"));
        match role {
            "system" | "developer" => system.push(text),
            "assistant" => {
                let mut calls = Vec::new();
                for c in crate::toolkit::convert::message_calls(m) {
                    if let Some(id) = c.id {
                        names.insert(id.to_string(), c.name.to_string());
                    }
                    let args = match c.arguments {
                        Value::Null => Value::Object(Map::new()),
                        a => a,
                    };
                    calls.push((c.name.to_string(), args));
                }
                let mut s = text.trim_end().to_string();
                if !calls.is_empty() {
                    if !s.is_empty() {
                        s.push('\n');
                    }
                    s.push_str(&render_calls(format, &calls));
                }
                rest.push(("assistant".into(), s));
            }
            "tool" | "function" => {
                let id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let name = names
                    .get(&id)
                    .cloned()
                    .or_else(|| m.get("name").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_default();
                let r = ToolResult {
                    call_id: id,
                    name,
                    content: ResultContent::Text(text),
                    is_error: false,
                };
                let t = r.to_text();
                match rest.last_mut() {
                    Some((role, prev)) if role == "user" && prev.starts_with("[Tool ") => {
                        prev.push_str("\n\n");
                        prev.push_str(&t);
                    }
                    _ => rest.push(("user".into(), t)),
                }
            }
            _ => rest.push(("user".into(), text)),
        }
    }
    if !prompt.is_empty() {
        system.push(prompt.trim_end().to_string());
    }
    let mut out = Vec::new();
    let sys: Vec<String> = system
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect();
    if !sys.is_empty() {
        let sys = sys.join("\n\n");
        if !system_in_user {
            out.push(serde_json::json!({"role": "system", "content": sys}));
        } else if let Some((_, first)) = rest.iter_mut().find(|(r, _)| r == "user") {
            *first = format!("{sys}\n\n{first}");
        } else {
            rest.insert(0, ("user".into(), sys));
        }
    }
    for (role, content) in rest {
        out.push(serde_json::json!({"role": role, "content": content}));
    }
    out
}

fn log_unexpressed(items: &[crate::toolkit::constrain::Unexpressed]) {
    static SEEN: OnceLock<Mutex<HashSet<(String, String, String)>>> = OnceLock::new();
    let seen = SEEN.get_or_init(|| Mutex::new(HashSet::new()));
    let Ok(mut seen) = seen.lock() else {
        return;
    };
    for u in items {
        if seen.len() < 10_000 && seen.insert((u.tool.clone(), u.path.clone(), u.keyword.clone())) {
            tracing::info!(tool = %u.tool, path = %u.path, keyword = %u.keyword,
                "schema keyword not expressible in the grammar: left to the normalizer");
        }
    }
}

/// Drops calls that repeat the prompt's example call verbatim (the
/// smallest models copy it) when none of the example's values comes from
/// the user's request: such a call is the prompt echoed, not the user's
/// request. The call is passed on as text instead, so nothing is lost.
pub struct EchoFilter {
    examples: Vec<(String, Value)>,
    user: String,
    held: Vec<Event>,
}

impl EchoFilter {
    /// A filter for the prompt's `examples` and the last user turn.
    pub fn new(examples: Vec<(String, Value)>, user: String) -> EchoFilter {
        EchoFilter {
            examples,
            user,
            held: Vec::new(),
        }
    }

    fn is_echo(&self, name: &str, arguments: &str) -> bool {
        let Ok(args) = serde_json::from_str::<Value>(arguments) else {
            return false;
        };
        let user = self.user.to_lowercase();
        // A value is the user's when the request contains it, or one of its
        // words of three or more letters or digits (`README` of
        // `/home/user/project/README.md`).
        let from_user = |v: &str| {
            let v = v.to_lowercase();
            user.contains(&v)
                || v.split(|c: char| !c.is_alphanumeric())
                    .any(|w| w.chars().count() >= 3 && user.contains(w))
        };
        self.examples.iter().any(|(n, a)| {
            n == name && *a == args && {
                let mut vals = Vec::new();
                strings(a, &mut vals);
                !vals.is_empty() && !vals.iter().any(|v| from_user(v))
            }
        })
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

impl CallStage for EchoFilter {
    fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
        for e in input.drain(..) {
            match e {
                Event::ToolStart { .. } | Event::ToolArgs { .. } => self.held.push(e),
                Event::ToolEnd { call, span } => {
                    if self.is_echo(&call.name, &call.arguments) {
                        tracing::info!(tool = %call.name, "call dropped: it repeats the prompt's example");
                        self.held.clear();
                        let text = format!(
                            "{{\"tool\": {}, \"arguments\": {}}}",
                            Value::String(call.name.to_string()),
                            call.arguments
                        );
                        out.push(Event::Text {
                            text: Delta::from(text.as_bytes()),
                            span,
                        });
                    } else {
                        out.append(&mut self.held);
                        out.push(Event::ToolEnd { call, span });
                    }
                }
                other => {
                    if self.held.is_empty() {
                        out.push(other);
                    } else {
                        self.held.push(other);
                    }
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        out.append(&mut self.held);
    }
}

/// Runs stages one after the other (the echo filter, then the normalizer).
pub struct Chain(pub Vec<Box<dyn CallStage>>);

impl CallStage for Chain {
    fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
        let mut cur = std::mem::take(input);
        for s in &mut self.0 {
            let mut next = Vec::new();
            s.process(&mut cur, &mut next);
            cur = next;
        }
        out.append(&mut cur);
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let mut cur: Vec<Event> = Vec::new();
        for s in &mut self.0 {
            let mut next = Vec::new();
            s.process(&mut cur, &mut next);
            s.finish(&mut next);
            cur = next;
        }
        out.append(&mut cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Span, ToolCall};
    use serde_json::json;

    fn call(name: &str, args: &str) -> Vec<Event> {
        let span = Span::default();
        vec![
            Event::ToolStart {
                index: 0,
                id: "c0".into(),
                name: name.into(),
                span,
            },
            Event::ToolArgs {
                index: 0,
                delta: Delta::from(args),
                span,
            },
            Event::ToolEnd {
                call: Box::new(ToolCall {
                    index: 0,
                    id: "c0".into(),
                    name: name.into(),
                    arguments: args.into(),
                    repairs: Vec::new(),
                    truncated: false,
                }),
                span,
            },
        ]
    }

    fn run(user: &str, name: &str, args: &str) -> Vec<Event> {
        let mut f = EchoFilter::new(
            vec![
                ("Bash".into(), json!({"command": "ls -la"})),
                (
                    "Read".into(),
                    json!({"file_path": "/home/user/project/README.md"}),
                ),
            ],
            user.into(),
        );
        let mut out = Vec::new();
        f.process(&mut call(name, args), &mut out);
        f.finish(&mut out);
        out
    }

    #[test]
    fn echo_of_the_example_becomes_text() {
        let out = run("Show the git diff.", "Bash", r#"{"command": "ls -la"}"#);
        assert_eq!(out.len(), 1);
        assert!(
            matches!(&out[0], Event::Text { text, .. } if text.as_bytes() == br#"{"tool": "Bash", "arguments": {"command": "ls -la"}}"#)
        );
    }

    #[test]
    fn the_users_own_values_are_a_call() {
        assert_eq!(
            run("Run ls -la here", "Bash", r#"{"command": "ls -la"}"#).len(),
            3
        );
        assert_eq!(
            run(
                "Open README.md",
                "Read",
                r#"{"file_path": "/home/user/project/README.md"}"#
            )
            .len(),
            3
        );
        assert_eq!(
            run("Show the git diff.", "Bash", r#"{"command": "git diff"}"#).len(),
            3
        );
    }

    fn setup() -> EmulateSetup {
        EmulateSetup::for_model(
            &lookup("SmolLM2-135M-Instruct"),
            Some(Server::LlamaCppPython),
            &EmulateConfig::default(),
        )
    }

    #[test]
    fn rewrite_moves_tools_into_the_prompt_and_calls_into_text() {
        let s = setup();
        assert_eq!(s.size, SizeClass::Small);
        let mut body = json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "List the files."},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "Bash", "arguments": "{\"command\": \"ls\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
            ],
            "tools": [{"type": "function", "function": {"name": "Bash", "description": "Run a command.",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}],
            "tool_choice": "auto",
        })
        .as_object()
        .cloned()
        .unwrap();
        let r = rewrite(&mut body, &s).unwrap();
        assert!(!body.contains_key("tools") && !body.contains_key("tool_choice"));
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[0]["role"], "system");
        let sys = m[0]["content"].as_str().unwrap();
        assert!(
            sys.starts_with("Be brief.\n\n") && sys.contains("- Bash(command: string)"),
            "{sys}"
        );
        assert_eq!(m[2]["role"], "assistant");
        assert_eq!(
            m[2]["content"],
            r#"{"tool": "Bash", "arguments": {"command": "ls"}}"#
        );
        assert_eq!(m[3]["role"], "user");
        assert!(m[3]["content"].as_str().unwrap().contains("a.txt"));
        // After a tool result, auto stays a choice: the grammar has a text branch.
        assert!(r.constrained);
        assert!(body["grammar"]
            .as_str()
            .unwrap()
            .starts_with("root ::= call | text"));
        assert_eq!(r.offered, vec!["Bash".to_string()]);
        assert!(r.parse.is_some());
    }

    #[test]
    fn system_in_user_puts_the_prompt_in_the_first_user_turn() {
        let over = EmulateConfig {
            system_in_user: Some(true),
            ..EmulateConfig::default()
        };
        let s = EmulateSetup::for_model(
            &lookup("gemma-3-270m-it"),
            Some(Server::LlamaCppPython),
            &over,
        );
        assert!(s.system_in_user);
        assert!(!setup().system_in_user);
        let mut body = json!({
            "messages": [{"role": "system", "content": "Be brief."},
                         {"role": "user", "content": "Show the git diff."}],
            "tools": [{"type": "function", "function": {"name": "Bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}],
        })
        .as_object()
        .cloned()
        .unwrap();
        rewrite(&mut body, &s).unwrap();
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["role"], "user");
        let t = m[0]["content"].as_str().unwrap();
        assert!(t.starts_with("Be brief.\n\n"), "{t}");
        assert!(t.contains("Bash(command: string)") && t.ends_with("\n\nShow the git diff."));
    }

    #[test]
    fn where_the_prompt_goes_is_decided_by_config_probe_then_registry() {
        use crate::proxy::probe::Evidence;
        let gemma = lookup("gemma-3-270m-it");
        let server = Some(Server::LlamaCppPython);
        // Registry alone: Gemma 3 has no system role, SmolLM2 has one.
        let mut g = EmulateSetup::for_model(&gemma, server, &EmulateConfig::default());
        assert!(g.system_in_user);
        assert_eq!(g.system_placement, SystemPlacement::Registry(None));
        assert!(!setup().system_in_user);
        // A probe that saw the template keep it wins over the registry
        // (llama-server's fallback template for a GGUF without one)...
        let kept = SystemProbe {
            role: SystemRole::Kept,
            evidence: Evidence::Template,
        };
        g.place_system(Ok(kept));
        assert!(!g.system_in_user);
        assert!(g
            .describe()
            .contains("prompt in the system message (start-up probe"));
        // ...and one that saw it dropped folds it for any model.
        let mut smol = setup();
        smol.place_system(Ok(SystemProbe {
            role: SystemRole::Dropped,
            evidence: Evidence::PromptTokens {
                with: 10,
                without: 10,
            },
        }));
        assert!(smol.system_in_user);
        assert!(
            smol.describe().contains("first user turn")
                && smol
                    .describe()
                    .contains("10 prompt tokens with the marked one, 10 with a one-word one"),
            "{}",
            smol.describe()
        );
        // A failed probe leaves the registry's answer, with the reason.
        let mut g = EmulateSetup::for_model(&gemma, server, &EmulateConfig::default());
        g.place_system(Err(ProbeError::NoUsage));
        assert!(g.system_in_user);
        assert!(
            matches!(&g.system_placement, SystemPlacement::Registry(Some(e)) if e.contains("usage"))
        );
        // The configuration wins over everything.
        let over = EmulateConfig {
            system_in_user: Some(false),
            ..EmulateConfig::default()
        };
        let mut g = EmulateSetup::for_model(&gemma, server, &over);
        g.place_system(Ok(SystemProbe {
            role: SystemRole::Dropped,
            evidence: Evidence::Rejected("no".into()),
        }));
        assert!(!g.system_in_user);
        assert_eq!(g.system_placement, SystemPlacement::Config);
    }

    #[test]
    fn copy_constraint_takes_spans_of_the_last_user_turn_only() {
        let over = EmulateConfig {
            copy_spans: Some(3),
            ..EmulateConfig::default()
        };
        let s = EmulateSetup::for_model(
            &lookup("SmolLM2-135M-Instruct"),
            Some(Server::LlamaCppPython),
            &over,
        );
        let tools = json!([{"type": "function", "function": {"name": "Bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]);
        let mut body = json!({"messages": [{"role": "user", "content": "Show the git diff."}], "tools": tools})
            .as_object()
            .cloned()
            .unwrap();
        rewrite(&mut body, &s).unwrap();
        let g = body["grammar"].as_str().unwrap();
        assert!(
            g.contains(r#""\"git diff\"""#) && !g.contains("char{"),
            "{g}"
        );
        // After a tool result, strings are free again.
        let mut body = json!({"messages": [
            {"role": "user", "content": "Show the git diff."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "Bash", "arguments": "{\"command\": \"git diff\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}], "tools": tools})
        .as_object()
        .cloned()
        .unwrap();
        rewrite(&mut body, &s).unwrap();
        let g = body["grammar"].as_str().unwrap();
        assert!(!g.contains("git diff") && g.contains("char{"), "{g}");
        // A retry copies from the client's turn it was given.
        let mut body = json!({"messages": [{"role": "user", "content": "You must call one of the tools now."}],
            "tools": tools})
        .as_object()
        .cloned()
        .unwrap();
        rewrite_copying(&mut body, &s, None, Some("Show the git diff.")).unwrap();
        let g = body["grammar"].as_str().unwrap();
        assert!(
            g.contains(r#""\"git diff\"""#) && !g.contains("must call"),
            "{g}"
        );
    }

    #[test]
    fn small_models_call_after_a_user_turn() {
        let mut body = json!({
            "messages": [{"role": "user", "content": "Show the git diff."}],
            "tools": [{"type": "function", "function": {"name": "Bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}],
        })
        .as_object()
        .cloned()
        .unwrap();
        rewrite(&mut body, &setup()).unwrap();
        let g = body["grammar"].as_str().unwrap();
        assert!(g.starts_with("root ::= call\n"), "{g}");
        let sys = body["messages"][0]["content"].as_str().unwrap();
        assert!(sys.contains("You must call at least one tool"));
        assert!(sys.contains("Copy the values"));
    }

    #[test]
    fn tool_choice_none_sends_no_tools_and_no_grammar() {
        let mut body = json!({
            "messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"type": "function", "function": {"name": "Bash", "parameters": {"type": "object"}}}],
            "tool_choice": "none",
        })
        .as_object()
        .cloned()
        .unwrap();
        let r = rewrite(&mut body, &setup()).unwrap();
        assert!(r.parse.is_none() && !body.contains_key("grammar") && !body.contains_key("tools"));
        assert_eq!(body["messages"], json!([{"role": "user", "content": "Hi"}]));
    }

    fn two_tools(user: &str) -> Map<String, Value> {
        json!({
            "model": "m",
            "temperature": 0,
            "stream": true,
            "messages": [{"role": "user", "content": user}],
            "tools": [
                {"type": "function", "function": {"name": "Bash", "description": "Run a shell command.\nMore text.",
                    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
                {"type": "function", "function": {"name": "Read", "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}},
            ],
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    /// SmolLM2 behind `llama_cpp.server`, two-step decoding on or off.
    fn smollm2_setup(two_step: bool) -> EmulateSetup {
        EmulateSetup::for_model(
            &lookup("SmolLM2-135M-Instruct"),
            Some(Server::LlamaCppPython),
            &EmulateConfig {
                two_step: Some(two_step),
                ..EmulateConfig::default()
            },
        )
    }

    #[test]
    fn two_step_first_asks_for_a_name_under_a_name_grammar() {
        let setup = smollm2_setup(true);
        assert!(setup.two_step() && setup.describe().contains("two-step"));
        let step = name_step(&two_tools("Open notes.txt"), &setup).unwrap();
        assert_eq!(step.names, vec!["Bash".to_string(), "Read".to_string()]);
        assert_eq!(step.body["grammar"], "root ::= \"Bash\" | \"Read\"\n");
        assert_eq!(step.body["stream"], false);
        assert_eq!(step.body["temperature"], 0);
        let sys = step.body["messages"][0]["content"].as_str().unwrap();
        assert!(
            sys.contains("- Bash: Run a shell command.\n- Read: Read a file.\n"),
            "{sys}"
        );
        assert!(
            !sys.contains("More text") && !sys.contains("file_path"),
            "{sys}"
        );
        let reply = |c: &str| json!({"choices": [{"message": {"content": c}}]}).to_string();
        assert_eq!(
            step.pick(reply(" Read\n").as_bytes()).as_deref(),
            Some("Read")
        );
        assert_eq!(
            step.pick(reply("\"bash\"").as_bytes()).as_deref(),
            Some("Bash")
        );
        assert_eq!(step.pick(reply("Write").as_bytes()), None);
        assert_eq!(step.pick(b"not json"), None);
    }

    #[test]
    fn two_step_second_offers_the_picked_tool_alone() {
        let setup = smollm2_setup(true);
        let mut body = two_tools("Open notes.txt");
        let r = rewrite_for(&mut body, &setup, Some("Read")).unwrap();
        assert_eq!(r.offered, vec!["Read".to_string()]);
        let g = body["grammar"].as_str().unwrap();
        assert!(g.contains("Read") && !g.contains("Bash"), "{g}");
        // A name the request does not offer is ignored: one step.
        let mut body = two_tools("Open notes.txt");
        let r = rewrite_for(&mut body, &setup, Some("Write")).unwrap();
        assert_eq!(r.offered.len(), 2);
    }

    #[test]
    fn two_step_applies_only_to_a_required_call_among_several_tools() {
        let setup = smollm2_setup(true);
        // Off by configuration, or no constraint: no first step.
        assert!(name_step(&two_tools("x"), &smollm2_setup(false)).is_none());
        let unconstrained = EmulateSetup::for_model(
            &lookup("SmolLM2-135M-Instruct"),
            None,
            &EmulateConfig {
                two_step: Some(true),
                ..EmulateConfig::default()
            },
        );
        assert!(!unconstrained.two_step());
        assert!(name_step(&two_tools("x"), &unconstrained).is_none());
        // A named tool, or auto after a tool result: no first step.
        let mut named = two_tools("x");
        named.insert(
            "tool_choice".into(),
            json!({"type": "function", "function": {"name": "Read"}}),
        );
        assert!(name_step(&named, &setup).is_none());
        let mut after_result = two_tools("x");
        after_result["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "tool", "tool_call_id": "c", "content": "ok"}));
        assert!(name_step(&after_result, &setup).is_none());
        // One tool: nothing to pick.
        let mut one = two_tools("x");
        one["tools"].as_array_mut().unwrap().pop();
        assert!(name_step(&one, &setup).is_none());
    }

    #[test]
    fn emulated_retries_are_the_smaller_of_default_and_config() {
        let s = EmulateSetup::for_model(
            &lookup("SmolLM2-135M-Instruct"),
            None,
            &EmulateConfig {
                retries: Some(2),
                ..EmulateConfig::default()
            },
        );
        assert_eq!(s.retries(1), 1);
        assert_eq!(s.retries(5), 2);
        assert_eq!(smollm2_setup(false).retries(0), 0);
    }

    #[test]
    fn auto_mode_follows_the_registry() {
        assert_eq!(choose_mode(&lookup("SmolLM2-135M-Instruct")), Mode::Emulate);
        assert_eq!(choose_mode(&lookup("gemma-3-270m-it")), Mode::Emulate);
        assert_eq!(choose_mode(&lookup("qwen2.5-7b-instruct")), Mode::Native);
    }
}
