//! The capability registry: what a model can do with tools.
//!
//! [`Registry::lookup`] reads a model id the way people write them —
//! `gpt-4o`, `claude-sonnet-4-20250514`, `ollama/qwen3:32b`,
//! `hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M`,
//! `Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf`, `openrouter/qwen/qwen3-coder` —
//! strips provider prefixes, GGUF file names and quantisation suffixes,
//! parses family, version, variant and size with [`crate::model`], and
//! answers the capability fields of RFC-136 §2 ([`Capabilities`]) plus the
//! dialects the parser should expect (from [`crate::model::route`], not
//! changed here), the emulation format for prompted tools and a
//! [`SizeClass`].
//!
//! The built-in table is `src/toolkit/models.json` (one entry per family and
//! the versions that differ). Every entry whose conditions hold is applied,
//! in order, so a family default comes first and a version's differences
//! after it; [`ModelInfo::matched`] lists the entries that applied — the
//! "why" of `toolstream models show`. [`Registry::extend_from_str`] adds
//! entries from a TOML or JSON file (same shape), applied after the built-in
//! ones so they override them.
//!
//! ```
//! use toolstream::toolkit::registry::{Registry, SizeClass};
//! let reg = Registry::builtin();
//! let m = reg.lookup("claude-sonnet-4-20250514");
//! assert_eq!(m.family, "claude");
//! assert_eq!(m.version.as_deref(), Some("4"));
//! assert_eq!(m.variant.as_deref(), Some("sonnet"));
//! assert!(m.capabilities.native_tools && m.capabilities.parallel_tools);
//! assert_eq!(m.capabilities.context_window, Some(200_000));
//!
//! let m = reg.lookup("hf.co/bartowski/SmolLM2-135M-Instruct-GGUF:Q4_K_M");
//! assert_eq!(m.quantization.as_deref(), Some("Q4_K_M"));
//! assert_eq!(m.size_class, SizeClass::Small);
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dialect::Dialect;
use crate::model::{self, Family};

/// What a model supports (RFC-136 §2's `ModelCapability`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Structured (native) tool calling through the chat API or template.
    pub native_tools: bool,
    /// Several calls in one turn.
    pub parallel_tools: bool,
    /// Tool-call arguments streamed as they are generated.
    pub tool_streaming: bool,
    /// A reliable JSON output mode.
    pub json_mode: bool,
    /// Extended thinking before answering.
    pub reasoning: bool,
    /// The most output tokens per reply, if known.
    pub max_output_tokens: Option<u32>,
    /// The context window in tokens, if known.
    pub context_window: Option<u32>,
    /// Strict schemas (OpenAI `strict: true`, constrained decoding).
    pub strict_schemas: bool,
    /// Tool results go in a user message (Anthropic), not a `tool` role.
    pub tool_result_in_user_message: bool,
    /// `tool_choice: required` (or its equivalent) is honoured.
    pub tool_choice_required: bool,
}

impl Default for Capabilities {
    /// What an unknown model gets: no native tools (prompted emulation),
    /// everything else off, `tool_choice: required` emulated by the prompt.
    fn default() -> Self {
        Capabilities {
            native_tools: false,
            parallel_tools: false,
            tool_streaming: false,
            json_mode: false,
            reasoning: false,
            max_output_tokens: None,
            context_window: None,
            strict_schemas: false,
            tool_result_in_user_message: false,
            tool_choice_required: true,
        }
    }
}

/// Partial capabilities, as an entry of the table writes them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityPatch {
    /// See [`Capabilities::native_tools`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_tools: Option<bool>,
    /// See [`Capabilities::parallel_tools`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tools: Option<bool>,
    /// See [`Capabilities::tool_streaming`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_streaming: Option<bool>,
    /// See [`Capabilities::json_mode`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_mode: Option<bool>,
    /// See [`Capabilities::reasoning`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// See [`Capabilities::max_output_tokens`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// See [`Capabilities::context_window`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// See [`Capabilities::strict_schemas`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict_schemas: Option<bool>,
    /// See [`Capabilities::tool_result_in_user_message`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_in_user_message: Option<bool>,
    /// See [`Capabilities::tool_choice_required`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice_required: Option<bool>,
}

impl CapabilityPatch {
    fn apply(&self, c: &mut Capabilities) {
        macro_rules! set {
            ($($f:ident),*) => {$(
                if let Some(v) = self.$f { c.$f = v; }
            )*};
        }
        set!(
            native_tools,
            parallel_tools,
            tool_streaming,
            json_mode,
            reasoning,
            strict_schemas,
            tool_result_in_user_message,
            tool_choice_required
        );
        if self.max_output_tokens.is_some() {
            c.max_output_tokens = self.max_output_tokens;
        }
        if self.context_window.is_some() {
            c.context_window = self.context_window;
        }
    }
}

/// How big a model is: what prompts and simplification adapt to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeClass {
    /// At most 4 B parameters.
    Small,
    /// More than 4 B, at most 40 B (and local models of unknown size).
    Medium,
    /// More than 40 B, and the hosted API models.
    Large,
}

impl SizeClass {
    /// The class of a parameter count in billions.
    pub fn of_params(billions: f64) -> SizeClass {
        if billions <= 4.0 {
            SizeClass::Small
        } else if billions <= 40.0 {
            SizeClass::Medium
        } else {
            SizeClass::Large
        }
    }

    /// `small`, `medium` or `large`.
    pub const fn name(self) -> &'static str {
        match self {
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Large => "large",
        }
    }

    /// Reads `small`, `medium` or `large`.
    pub fn from_name(s: &str) -> Option<SizeClass> {
        match s.trim().to_ascii_lowercase().as_str() {
            "small" | "s" => Some(SizeClass::Small),
            "medium" | "m" => Some(SizeClass::Medium),
            "large" | "l" => Some(SizeClass::Large),
            _ => None,
        }
    }
}

impl fmt::Display for SizeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The way a prompt asks a model without native tools to write a call
/// (RFC-136 §4); see [`crate::toolkit::prompt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmulationFormat {
    /// One fenced JSON object `{"tool": …, "arguments": {…}}`.
    Json,
    /// The same call format with a one-line-per-tool list (small contexts).
    Compact,
    /// One fenced JSON object per call, several per reply.
    Parallel,
    /// `<tool_call><name>…</name><arguments><p>…</p></arguments></tool_call>`.
    Xml,
}

impl EmulationFormat {
    /// All formats.
    pub const ALL: [EmulationFormat; 4] = [
        EmulationFormat::Json,
        EmulationFormat::Compact,
        EmulationFormat::Parallel,
        EmulationFormat::Xml,
    ];

    /// The parser dialect that reads what this format tells the model to
    /// write.
    pub const fn dialect(self) -> Dialect {
        match self {
            EmulationFormat::Json | EmulationFormat::Compact | EmulationFormat::Parallel => {
                Dialect::Json
            }
            EmulationFormat::Xml => Dialect::XmlEmulation,
        }
    }

    /// `json`, `compact`, `parallel` or `xml`.
    pub const fn name(self) -> &'static str {
        match self {
            EmulationFormat::Json => "json",
            EmulationFormat::Compact => "compact",
            EmulationFormat::Parallel => "parallel",
            EmulationFormat::Xml => "xml",
        }
    }

    /// Reads a format name.
    pub fn from_name(s: &str) -> Option<EmulationFormat> {
        EmulationFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for EmulationFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How emulated tool calling is set up for a size class: the defaults the
/// proxy's `emulate` mode uses. They are data, not code:
/// `src/toolkit/emulation_defaults.json`, regenerated from the measured
/// evaluation by `corpus/eval/report.py` (`docs/eval.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulationDefaults {
    /// The prompt's call format (`None`: the model's registry entry decides).
    pub format: Option<EmulationFormat>,
    /// Tools offered in the prompt at most (the rest cut by tool search).
    pub max_tools: usize,
    /// Offer optional parameters in the constraint (off: required only).
    pub optional_params: bool,
    /// Constrain the output where the upstream can (a grammar).
    pub constrain: bool,
    /// Longest string value the constraint admits, in characters.
    pub max_string: usize,
    /// Show an example call (of an offered tool) in the prompt.
    pub example: bool,
    /// Tell the model to copy the user's own values, not the example's.
    pub copy_values: bool,
    /// Validation retries with the normalizer's feedback (at most the
    /// proxy's `[retries] validation`).
    pub retries: u32,
    /// Serve `tool_choice: auto` right after a user turn as `required`
    /// (after a tool result, `auto` stays a choice between text and a
    /// call). Measured: given the choice, the smallest models answer in
    /// prose instead of calling the tool the request needs.
    pub auto_as_required: bool,
    /// Two-step decoding: first one tool name constrained to the offered
    /// names (a list of names and one-line descriptions), then that tool's
    /// arguments under its schema alone. Needs a constraint.
    pub two_step: bool,
    /// Offer the tools best match first (tool search's ranking against the
    /// last user turn, also when every tool is sent); the prompt's example
    /// and two-step's name list follow that order. Off: the request's order.
    #[serde(default)]
    pub rank_tools: bool,
    /// RFC-136's placeholder prompt (`tool_name`, `arg1`, `value1`) instead
    /// of ours: #40's naive baseline, for the evaluation only.
    #[serde(default)]
    pub naive_prompt: bool,
    /// Copy constraint: right after a user turn, the grammar admits as
    /// string values only spans of that turn of up to this many words
    /// (`toolkit::constrain::request_spans`); 0 = off (any string).
    #[serde(default)]
    pub copy_spans: usize,
}

/// The emulation format #40's prompt table recommends per size class
/// (`prompt_formats.json`, generated by `tests/prompt_table_replay.rs`
/// from the replies recorded in `corpus/eval/prompts/`; see
/// `docs/prompts.md`).
const FORMATS_JSON: &str = include_str!("prompt_formats.json");

/// The emulation format measured best for models of a size class, when the
/// prompt evidence table measured a model of that class (`None`: not
/// measured; the registry then uses its rule: `compact` for small models,
/// `parallel` for models with parallel tools, else `json`). A model entry's
/// own `emulation` and a context window under 8,192 tokens (`compact`)
/// come first.
///
/// ```
/// use toolstream::toolkit::registry::recommended_format;
/// use toolstream::toolkit::{Registry, SizeClass};
/// let m = Registry::builtin().lookup("SmolLM2-135M-Instruct");
/// if let Some(f) = recommended_format(SizeClass::Small) {
///     assert_eq!(m.emulation, f);
/// }
/// ```
pub fn recommended_format(size: SizeClass) -> Option<EmulationFormat> {
    static TABLE: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| serde_json::from_str(FORMATS_JSON).unwrap_or_default());
    t.get(size.name())
        .and_then(|c| c.get("format"))
        .and_then(serde_json::Value::as_str)
        .and_then(EmulationFormat::from_name)
}

/// The compiled-in table of [`EmulationDefaults`] per size class.
const DEFAULTS_JSON: &str = include_str!("emulation_defaults.json");

#[derive(Deserialize)]
struct DefaultsTable {
    small: EmulationDefaults,
    medium: EmulationDefaults,
    large: EmulationDefaults,
}

fn defaults_table() -> Option<&'static DefaultsTable> {
    static TABLE: std::sync::OnceLock<Option<DefaultsTable>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut v: serde_json::Value = serde_json::from_str(DEFAULTS_JSON).ok()?;
            if let Some(o) = v.as_object_mut() {
                o.retain(|k, _| !k.starts_with('_'));
            }
            serde_json::from_value(v).ok()
        })
        .as_ref()
}

impl EmulationDefaults {
    /// The defaults for a size class (from `emulation_defaults.json`).
    ///
    /// ```
    /// use toolstream::toolkit::registry::EmulationDefaults;
    /// use toolstream::toolkit::SizeClass;
    /// let small = EmulationDefaults::for_size(SizeClass::Small);
    /// let large = EmulationDefaults::for_size(SizeClass::Large);
    /// assert!(small.max_tools <= large.max_tools);
    /// ```
    pub fn for_size(size: SizeClass) -> EmulationDefaults {
        match defaults_table() {
            Some(t) => match size {
                SizeClass::Small => t.small.clone(),
                SizeClass::Medium => t.medium.clone(),
                SizeClass::Large => t.large.clone(),
            },
            // The compiled-in table is checked by a unit test; should it
            // not read, emulate plainly: no cut below 64 tools, no grammar.
            None => EmulationDefaults {
                format: None,
                max_tools: 64,
                optional_params: true,
                constrain: false,
                max_string: 100_000,
                example: true,
                copy_values: false,
                retries: 1,
                auto_as_required: false,
                two_step: false,
                rank_tools: false,
                naive_prompt: false,
                copy_spans: 0,
            },
        }
    }
}

/// One entry of the table: conditions, then what it sets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// A label for [`ModelInfo::matched`].
    pub name: String,
    /// Condition: the parsed family (as [`Family::name`], or a family an
    /// earlier entry set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Condition: the version starts with these dot-separated components
    /// (`"3"` holds for `3`, `3.5`, `3.5.1`; not for `30`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Condition: the compacted name (lower case, no `-`, `_`, space) holds
    /// one of these.
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub any: Vec<String>,
    /// Condition: the compacted name holds none of these.
    #[serde(default, rename = "not", skip_serializing_if = "Vec::is_empty")]
    pub none: Vec<String>,
    /// Condition: the parameter count (billions) is at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_params: Option<f64>,
    /// Condition: the parameter count (billions) is at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_params: Option<f64>,
    /// Sets the family (for families the parser does not know).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_family: Option<String>,
    /// The capabilities it sets.
    #[serde(default)]
    pub caps: CapabilityPatch,
    /// Sets the dialect names (default: the parser's routing table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialects: Option<Vec<String>>,
    /// Sets the emulation format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationFormat>,
    /// Sets the size class (hosted models of unpublished size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_class: Option<SizeClass>,
    /// Sets the parameter count (billions) when the id does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    #[serde(default, rename = "model")]
    models: Vec<Entry>,
}

/// A registry file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum RegistryError {
    /// JSON that does not parse or does not have the table's shape.
    Json(serde_json::Error),
    /// TOML that does not parse or does not have the table's shape.
    Toml(toml::de::Error),
    /// An entry with an invalid value.
    Invalid {
        /// The entry's name.
        entry: String,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Json(e) => write!(f, "model registry (JSON): {e}"),
            RegistryError::Toml(e) => write!(f, "model registry (TOML): {e}"),
            RegistryError::Invalid { entry, reason } => {
                write!(f, "model registry entry `{entry}`: {reason}")
            }
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegistryError::Json(e) => Some(e),
            RegistryError::Toml(e) => Some(e),
            RegistryError::Invalid { .. } => None,
        }
    }
}

/// What the registry knows of one model id.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelInfo {
    /// The id as given.
    pub id: String,
    /// The serving provider prefix (`ollama`, `openrouter`, `hf.co`, …).
    pub provider: Option<String>,
    /// The organisation or uploader (`meta-llama`, `bartowski`, …).
    pub org: Option<String>,
    /// The model name without provider, organisation, tag, file extension
    /// and quantisation.
    pub name: String,
    /// The family ([`Family::name`], or one an entry set).
    pub family: String,
    /// The version (`3.3`, `4`, `4o`, `v3.1`).
    pub version: Option<String>,
    /// The variant (`sonnet`, `instruct`, `coder`, `flash`, `mini`, …).
    pub variant: Option<String>,
    /// The parameter count as written (`70b`, `30b-a3b`, `135m`).
    pub size: Option<String>,
    /// The total parameter count in billions, if known.
    pub params_b: Option<f64>,
    /// The quantisation (`Q4_K_M`, `fp16`, `4bit`), if written.
    pub quantization: Option<String>,
    /// A fine-tune or an unknown organisation's upload.
    pub custom: bool,
    /// What the model supports.
    pub capabilities: Capabilities,
    /// The dialect names the parser should expect (first = primary; empty:
    /// auto-detection or a provider API that returns structured calls).
    pub dialects: Vec<String>,
    /// The format for prompted (emulated) tools.
    pub emulation: EmulationFormat,
    /// The size class.
    pub size_class: SizeClass,
    /// The table entries that applied, in order.
    pub matched: Vec<String>,
}

impl ModelInfo {
    /// The parser dialect that reads calls written in [`ModelInfo::emulation`].
    pub fn emulation_dialect(&self) -> Dialect {
        self.emulation.dialect()
    }

    /// The parser dialects for native output (those this build knows).
    pub fn native_dialects(&self) -> Vec<Dialect> {
        self.dialects
            .iter()
            .filter_map(|d| Dialect::from_name(d).ok())
            .collect()
    }
}

/// The capability registry: the built-in table plus any extensions.
#[derive(Clone, Debug)]
pub struct Registry {
    entries: Vec<Entry>,
}

const BUILTIN: &str = include_str!("models.json");

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

impl Registry {
    /// The built-in table (`src/toolkit/models.json`).
    pub fn builtin() -> Registry {
        let mut r = Registry {
            entries: Vec::new(),
        };
        // The built-in table is part of the source and tested; a parse
        // failure here is caught by every test of this module.
        if let Ok(()) = r.extend_from_str(BUILTIN, Some("json")) {
            return r;
        }
        Registry {
            entries: Vec::new(),
        }
    }

    /// A registry with no entries (every model gets the defaults).
    pub fn empty() -> Registry {
        Registry {
            entries: Vec::new(),
        }
    }

    /// The entries, in the order they apply.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Appends entries (they apply after, so override, the existing ones).
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// Appends the entries of a TOML or JSON table
    /// (`{"model": [entry, …]}` / `[[model]]`). `format` is `"json"`,
    /// `"toml"`, or `None` to tell by the first non-blank character.
    ///
    /// ```
    /// use toolstream::toolkit::registry::Registry;
    /// let mut reg = Registry::builtin();
    /// reg.extend_from_str(r#"
    /// [[model]]
    /// name = "our fine-tune"
    /// match = ["acmecoder"]
    /// set_family = "acme"
    /// params = 7.0
    /// caps = { native_tools = true, context_window = 65536 }
    /// dialects = ["hermes"]
    /// "#, None).unwrap();
    /// let m = reg.lookup("acme/AcmeCoder-v2");
    /// assert_eq!(m.family, "acme");
    /// assert_eq!(m.capabilities.context_window, Some(65536));
    /// assert_eq!(m.dialects, ["hermes"]);
    /// ```
    pub fn extend_from_str(
        &mut self,
        text: &str,
        format: Option<&str>,
    ) -> Result<(), RegistryError> {
        let json = match format {
            Some(f) => f.eq_ignore_ascii_case("json"),
            None => text.trim_start().starts_with('{'),
        };
        let table: Table = if json {
            serde_json::from_str(text).map_err(RegistryError::Json)?
        } else {
            toml::from_str(text).map_err(RegistryError::Toml)?
        };
        for e in &table.models {
            if e.name.trim().is_empty() {
                return Err(RegistryError::Invalid {
                    entry: String::new(),
                    reason: "an entry needs a `name`".into(),
                });
            }
            for d in e.dialects.iter().flatten() {
                Dialect::from_name(d).map_err(|err| RegistryError::Invalid {
                    entry: e.name.clone(),
                    reason: err.to_string(),
                })?;
            }
        }
        self.entries.extend(table.models);
        Ok(())
    }

    /// What the registry knows of `id`. Never fails: an unknown model gets
    /// [`Capabilities::default`] and JSON emulation.
    pub fn lookup(&self, id: &str) -> ModelInfo {
        let routed = model::route(id);
        let spec = &routed.spec;
        let mut family = spec.family.name().to_owned();
        let name = spec.name.clone();
        let compacted = model::compact(&name);
        let version = version_of(spec.family, &name).or_else(|| spec.version.clone());
        let variant = variant_of(&name);
        let mut size = spec.size.clone();
        if spec.family == Family::Gpt
            && size.is_some()
            && !name.to_ascii_lowercase().contains("oss")
        {
            size = None;
        }
        let mut params_b = size.as_deref().and_then(params_of);
        let mut caps = Capabilities::default();
        let mut dialects: Vec<String> = routed
            .dialect_names
            .iter()
            .filter(|d| Dialect::from_name(d).is_ok())
            .map(|d| (*d).to_owned())
            .collect();
        let mut emulation = None;
        let mut size_class = None;
        let mut matched = Vec::new();
        for e in &self.entries {
            if !entry_holds(e, &family, version.as_deref(), &compacted, params_b) {
                continue;
            }
            if let Some(f) = &e.set_family {
                family = f.clone();
            }
            e.caps.apply(&mut caps);
            if let Some(d) = &e.dialects {
                dialects = d.clone();
            }
            if e.emulation.is_some() {
                emulation = e.emulation;
            }
            if e.size_class.is_some() {
                size_class = e.size_class;
            }
            if params_b.is_none() && e.params.is_some() {
                params_b = e.params;
            }
            matched.push(e.name.clone());
        }
        let size_class = size_class.unwrap_or_else(|| match params_b {
            Some(p) => SizeClass::of_params(p),
            None => SizeClass::Medium,
        });
        let emulation = emulation.unwrap_or_else(|| {
            if caps.context_window.is_some_and(|c| c < 8192) {
                return EmulationFormat::Compact;
            }
            // Measured (#40's prompt table) before the hand rule.
            recommended_format(size_class).unwrap_or(match size_class {
                SizeClass::Small => EmulationFormat::Compact,
                _ if caps.parallel_tools => EmulationFormat::Parallel,
                _ => EmulationFormat::Json,
            })
        });
        ModelInfo {
            id: id.to_owned(),
            provider: spec.provider.clone(),
            org: spec.org.clone(),
            name,
            family,
            version,
            variant,
            size,
            params_b,
            quantization: spec.quantization.clone(),
            custom: spec.custom,
            capabilities: caps,
            dialects,
            emulation,
            size_class,
            matched,
        }
    }
}

fn entry_holds(
    e: &Entry,
    family: &str,
    version: Option<&str>,
    name: &str,
    params: Option<f64>,
) -> bool {
    if e.family.as_deref().is_some_and(|f| f != family) {
        return false;
    }
    if let Some(want) = &e.version {
        let Some(have) = version else { return false };
        let have: Vec<&str> = have.trim_start_matches('v').split('.').collect();
        let want: Vec<&str> = want.trim_start_matches('v').split('.').collect();
        if want.len() > have.len() || want.iter().zip(&have).any(|(a, b)| a != b) {
            return false;
        }
    }
    if !e.any.is_empty() && !e.any.iter().any(|p| name.contains(p.as_str())) {
        return false;
    }
    if e.none.iter().any(|p| name.contains(p.as_str())) {
        return false;
    }
    if let Some(min) = e.min_params {
        if params.is_none_or(|p| p < min) {
            return false;
        }
    }
    if let Some(max) = e.max_params {
        if params.is_none_or(|p| p > max) {
            return false;
        }
    }
    true
}

/// The parameter count in billions of a size token (`70b`, `1.5b`, `135m`,
/// `8x7b`, `30b-a3b`, `e4b`).
fn params_of(size: &str) -> Option<f64> {
    let total = size.split('-').next()?;
    let total = total.strip_prefix('e').unwrap_or(total);
    let (num, scale) = if let Some(n) = total.strip_suffix('b') {
        (n, 1.0)
    } else if let Some(n) = total.strip_suffix('m') {
        (n, 0.001)
    } else {
        return None;
    };
    let v = match num.split_once('x') {
        Some((a, b)) => a.parse::<f64>().ok()? * b.parse::<f64>().ok()?,
        None => num.parse::<f64>().ok()?,
    };
    Some(v * scale)
}

const VARIANTS: &[&str] = &[
    "sonnet",
    "opus",
    "haiku",
    "instant",
    "coder",
    "code",
    "instruct",
    "chat",
    "it",
    "flash",
    "pro",
    "mini",
    "nano",
    "turbo",
    "large",
    "medium",
    "small",
    "tiny",
    "nemo",
    "vl",
    "thinking",
    "reasoning",
    "base",
    "lite",
    "plus",
    "scout",
    "maverick",
    "air",
    "distill",
];

fn variant_of(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let toks: Vec<&str> = lower.split(['-', '_', ' ', '.', ':']).collect();
    // `gpt-4o-mini`: the last recognised word after the family is the most
    // specific (`mini`), but Claude and the size words come first.
    for t in &toks {
        if matches!(*t, "sonnet" | "opus" | "haiku" | "instant") {
            return Some((*t).to_owned());
        }
    }
    toks.iter()
        .find(|t| VARIANTS.contains(t))
        .map(|t| (*t).to_owned())
}

/// The version where [`crate::model`] does not read it the way the
/// capability table needs: Claude (`claude-3-5-sonnet`, `claude-sonnet-4-5`),
/// GPT-4o, the o-series.
fn version_of(family: Family, name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    match family {
        Family::Claude => {
            let rest = lower.strip_prefix("claude")?;
            let nums: Vec<&str> = rest
                .split(['-', '.', '_', ' ', '@'])
                .filter(|t| !t.is_empty() && t.len() <= 2 && t.chars().all(|c| c.is_ascii_digit()))
                .collect();
            if nums.is_empty() {
                None
            } else {
                Some(nums.join("."))
            }
        }
        Family::Gpt => {
            if let Some(r) = lower.strip_prefix("chatgpt-") {
                return Some(r.split('-').next()?.to_owned());
            }
            let rest = lower
                .strip_prefix("gpt-")
                .or_else(|| lower.strip_prefix("gpt"));
            match rest {
                Some(r) => {
                    let v: String = r
                        .chars()
                        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'o')
                        .collect();
                    let v = v.trim_end_matches('.');
                    (!v.is_empty()).then(|| v.to_owned())
                }
                // o1, o3-mini, o4-mini.
                None if lower.starts_with('o') => {
                    let v: String = lower[1..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    (!v.is_empty()).then(|| format!("o{v}"))
                }
                None => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulation_defaults_table_reads() {
        // The compiled-in table reads (else for_size falls back to plain
        // emulation), and small models get the measured small setup.
        assert!(defaults_table().is_some());
        let s = EmulationDefaults::for_size(SizeClass::Small);
        let l = EmulationDefaults::for_size(SizeClass::Large);
        assert!(s.max_tools <= l.max_tools && s.max_string <= l.max_string);
        assert!(
            !s.two_step || s.constrain,
            "two-step decoding needs a constraint"
        );
    }

    #[test]
    fn builtin_table_parses() {
        let mut r = Registry::empty();
        r.extend_from_str(BUILTIN, Some("json")).unwrap();
        assert!(r.entries().len() > 40);
        assert_eq!(r.entries().len(), Registry::builtin().entries().len());
    }

    #[test]
    fn cleans_ids() {
        // The one id parser is model::ModelSpec::parse; the registry reads it.
        let c = crate::model::ModelSpec::parse("hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M");
        assert_eq!(c.provider.as_deref(), Some("hf.co"));
        assert_eq!(c.org.as_deref(), Some("bartowski"));
        assert_eq!(c.name, "Llama-3.2-3B-Instruct");
        assert_eq!(c.quantization.as_deref(), Some("Q4_K_M"));
        let c = crate::model::ModelSpec::parse("/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf");
        assert_eq!(c.name, "Meta-Llama-3.1-8B-Instruct");
        assert_eq!(c.quantization.as_deref(), Some("Q4_K_M"));
        let c = crate::model::ModelSpec::parse("ollama/qwen2.5-coder:7b-instruct-q4_K_M");
        assert_eq!(
            (c.name.as_str(), c.tag.as_deref()),
            ("qwen2.5-coder", Some("7b-instruct"))
        );
        let c = crate::model::ModelSpec::parse("openai/gpt-oss-20b");
        assert_eq!(
            (c.org.as_deref(), c.name.as_str()),
            (Some("openai"), "gpt-oss-20b")
        );
        let c = crate::model::ModelSpec::parse("openrouter/anthropic/claude-3.5-sonnet");
        assert_eq!(c.provider.as_deref(), Some("openrouter"));
        assert_eq!(c.name, "claude-3.5-sonnet");
        let c = crate::model::ModelSpec::parse("mlx-community/Qwen3-4B-4bit");
        assert_eq!(
            (c.name.as_str(), c.quantization.as_deref()),
            ("Qwen3-4B", Some("4bit"))
        );
        let c = crate::model::ModelSpec::parse("unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL");
        assert_eq!(c.name, "Qwen3-30B-A3B");
        assert_eq!(c.quantization.as_deref(), Some("Q4_K_XL"));
    }

    #[test]
    fn seeds_misclassified_ids() {
        let r = Registry::builtin();
        let m = r.lookup("gpt-4o");
        assert_eq!(
            (m.family.as_str(), m.version.as_deref()),
            ("gpt", Some("4o"))
        );
        assert!(m.capabilities.native_tools && m.capabilities.parallel_tools);
        assert!(m.capabilities.strict_schemas);
        assert_eq!(m.capabilities.context_window, Some(128_000));
        assert_eq!(m.capabilities.max_output_tokens, Some(16_384));
        assert_eq!(m.size_class, SizeClass::Large);

        let m = r.lookup("qwen3-coder-30b");
        assert_eq!(m.family, "qwen-coder");
        assert_eq!(m.params_b, Some(30.0));
        assert_eq!(m.size_class, SizeClass::Medium);
        assert!(m.capabilities.native_tools);
        assert_eq!(m.dialects.first().map(String::as_str), Some("qwen3_coder"));

        let m = r.lookup("gpt-oss-20b");
        assert_eq!(m.family, "gpt-oss");
        assert_eq!(m.params_b, Some(20.0));
        assert!(m.capabilities.native_tools && m.capabilities.reasoning);
        assert_eq!(m.dialects, ["harmony"]);

        let m = r.lookup("claude-sonnet-4-20250514");
        assert_eq!(m.family, "claude");
        assert_eq!(m.version.as_deref(), Some("4"));
        assert!(m.capabilities.reasoning && m.capabilities.tool_result_in_user_message);
        assert_eq!(m.capabilities.max_output_tokens, Some(64_000));
    }

    #[test]
    fn small_models_get_compact_emulation() {
        let r = Registry::builtin();
        let m = r.lookup("HuggingFaceTB/SmolLM2-135M-Instruct");
        assert_eq!(m.size_class, SizeClass::Small);
        assert!(!m.capabilities.native_tools);
        assert_eq!(m.emulation, EmulationFormat::Compact);
        let m = r.lookup("google/gemma-3-270m-it");
        assert_eq!(m.family, "gemma");
        assert_eq!(m.size_class, SizeClass::Small);
    }

    #[test]
    fn overrides_apply_after_builtins() {
        let mut r = Registry::builtin();
        r.extend_from_str(
            r#"{"model":[{"name":"local gpt-4o proxy","match":["gpt4o"],"caps":{"context_window":32000}}]}"#,
            None,
        )
        .unwrap();
        let m = r.lookup("gpt-4o");
        assert_eq!(m.capabilities.context_window, Some(32_000));
        assert_eq!(
            m.matched.last().map(String::as_str),
            Some("local gpt-4o proxy")
        );
        let err = r
            .extend_from_str(r#"{"model":[{"name":"x","dialects":["nope"]}]}"#, None)
            .unwrap_err();
        assert!(matches!(err, RegistryError::Invalid { .. }));
        assert!(r.extend_from_str("[[model]]\nname = 1", None).is_err());
    }

    #[test]
    fn params() {
        assert_eq!(params_of("8x7b"), Some(56.0));
        assert_eq!(params_of("30b-a3b"), Some(30.0));
        assert_eq!(params_of("135m"), Some(0.135));
        assert_eq!(params_of("e4b"), Some(4.0));
    }
}
