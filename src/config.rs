//! Parser configuration: dialects, prefill, known tools, limits and id generation.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::dialect::Dialect;
use crate::error::ToolsError;
use crate::event::CompactString;

/// Resource limits. Every buffer the parser holds is bounded by one of these;
/// they are a security boundary for untrusted model output.
///
/// When a limit is reached inside a tool call, the call ends with
/// `truncated: true` and a [`crate::RepairKind::LimitExceeded`] repair, and the
/// rest of the input continues as text. When it is reached while the parser is
/// still deciding whether some bytes are a call at all, those bytes are
/// released as text with a [`crate::DiagnosticKind::LimitExceeded`] diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting depth of a JSON value (default 100: below
    /// serde_json's default recursion limit of 128, with room for the
    /// levels a call's envelope and a `{"value": …}` wrapping add, so the
    /// final arguments always parse with `serde_json::from_str`).
    pub max_depth: usize,
    /// Maximum size of one call's arguments JSON, in bytes (default 16 MiB).
    pub max_args_bytes: usize,
    /// Maximum number of input bytes held back while undecided (a candidate
    /// call whose name is not known yet, a partial tag), default 1 MiB.
    pub max_held_bytes: usize,
    /// Maximum size of one held token (an object key, a number, a bare word)
    /// before it is written out as it stands (default 64 KiB). The XML
    /// dialects also bound by it how much of an untyped value they hold
    /// while it may still turn out to be a JSON number, literal, object or
    /// array.
    pub max_token_bytes: usize,
    /// Maximum length of one markup tag of the XML dialects (`<parameter=…>`,
    /// `<invoke name="…">`), and of the blank run looked at after a closing
    /// tag to decide whether it closes (default 1 KiB). A longer `<…` is text.
    pub max_tag_bytes: usize,
    /// Maximum number of repairs listed for one call (default 10,000). A
    /// longer list keeps the repairs at the lowest offsets and ends with one
    /// [`crate::RepairKind::RepairsOmitted`] at the first one left out. The
    /// repairs are still made (the arguments do not change); input that needs
    /// a repair per byte, such as megabytes of stray commas, so reports a
    /// bounded list (a call's repairs are kept while it is open).
    pub max_repairs: usize,
    /// Maximum number of input bytes one stream is parsed for (default
    /// `usize::MAX`: no cap). A server sets it per request: past it the
    /// parser ends the stream as [`crate::Parser::finish`] would (an open
    /// call is closed with `truncated: true` and a
    /// [`crate::RepairKind::LimitExceeded`] repair), reports one
    /// [`crate::DiagnosticKind::LimitExceeded`] diagnostic, and passes the
    /// rest through as text without looking at it.
    pub max_input_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 100,
            max_args_bytes: 16 << 20,
            max_held_bytes: 1 << 20,
            max_token_bytes: 64 << 10,
            max_tag_bytes: 1 << 10,
            max_repairs: 10_000,
            max_input_bytes: usize::MAX,
        }
    }
}

impl Limits {
    /// The value of one limit.
    ///
    /// ```
    /// use toolstream::{config::LimitKind, Limits};
    /// assert_eq!(Limits::default().get(LimitKind::MaxDepth), 100);
    /// ```
    pub fn get(&self, kind: LimitKind) -> usize {
        match kind {
            LimitKind::MaxDepth => self.max_depth,
            LimitKind::MaxArgsBytes => self.max_args_bytes,
            LimitKind::MaxHeldBytes => self.max_held_bytes,
            LimitKind::MaxTokenBytes => self.max_token_bytes,
            LimitKind::MaxTagBytes => self.max_tag_bytes,
            LimitKind::MaxRepairs => self.max_repairs,
            LimitKind::MaxInputBytes => self.max_input_bytes,
        }
    }
}

/// One field of [`Limits`], by name (as a limit that was reached is reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitKind {
    /// [`Limits::max_depth`].
    MaxDepth,
    /// [`Limits::max_args_bytes`].
    MaxArgsBytes,
    /// [`Limits::max_held_bytes`].
    MaxHeldBytes,
    /// [`Limits::max_token_bytes`].
    MaxTokenBytes,
    /// [`Limits::max_tag_bytes`].
    MaxTagBytes,
    /// [`Limits::max_repairs`].
    MaxRepairs,
    /// [`Limits::max_input_bytes`].
    MaxInputBytes,
}

impl LimitKind {
    /// The field's name (`max_depth`, …), as the CLI's `--max-depth` spells it with `_`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LimitKind::MaxDepth => "max_depth",
            LimitKind::MaxArgsBytes => "max_args_bytes",
            LimitKind::MaxHeldBytes => "max_held_bytes",
            LimitKind::MaxTokenBytes => "max_token_bytes",
            LimitKind::MaxTagBytes => "max_tag_bytes",
            LimitKind::MaxRepairs => "max_repairs",
            LimitKind::MaxInputBytes => "max_input_bytes",
        }
    }
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Generates the id of a call whose model did not write one.
///
/// The default produces `call_0`, `call_1`, … from the call index, so output
/// is deterministic (made in place, without an allocation).
#[derive(Clone, Default)]
pub struct IdGenerator(Option<Arc<dyn Fn(usize) -> String + Send + Sync>>);

impl IdGenerator {
    /// Wraps a function from call index to id.
    pub fn new(f: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        IdGenerator(Some(Arc::new(f)))
    }

    /// The id for call `index`.
    pub fn id(&self, index: usize) -> CompactString {
        match &self.0 {
            Some(f) => CompactString::from(f(index)),
            None => call_id(index),
        }
    }
}

/// True when `written` is `name` with some dots written as `_`.
fn dots_as_underscores(name: &str, written: &str) -> bool {
    name.len() == written.len()
        && name.contains('.')
        && name
            .bytes()
            .zip(written.bytes())
            .all(|(n, w)| n == w || (n == b'.' && w == b'_'))
}

/// The default id of call `index`: `call_` and its digits (at most 25
/// bytes: held inline by [`CompactString`] up to index 10^19 - 1).
fn call_id(index: usize) -> CompactString {
    let mut digits = [0u8; 20];
    let mut n = index;
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut id = CompactString::const_new("call_");
    for &d in &digits[k..] {
        id.push(char::from(d));
    }
    id
}

impl fmt::Debug for IdGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdGenerator(..)")
    }
}

/// One tool the model was offered.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// Its JSON schema for arguments, if given.
    pub parameters: Option<Value>,
}

/// The tools the model was offered: used to match names and to type values
/// in dialects whose values are untyped text (XML parameters, …).
///
/// Each tool's parameter list is read out of its schema once, here, so that
/// the questions a parser asks per call (does the tool take `city`? is
/// `count` an integer?) are a scan of a few names, not a walk of JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tools {
    specs: Vec<ToolSpec>,
    /// One per spec, in the same order.
    sigs: Vec<Signature>,
}

/// One parameter of a tool, as its schema declares it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Param {
    /// The property name.
    pub(crate) name: Box<str>,
    /// Its schema type (the first that is not `"null"` of a list of types).
    pub(crate) ty: Option<Box<str>>,
}

impl Param {
    /// Whether the schema type is one of `types`.
    pub(crate) fn typed(&self, types: &[&str]) -> bool {
        self.ty.as_deref().is_some_and(|t| types.contains(&t))
    }
}

/// What a tool's schema says of its arguments, read once.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Signature {
    /// The `properties` in schema order; `None` when the schema or its
    /// `properties` object is not given.
    pub(crate) params: Option<Arc<[Param]>>,
    /// The `required` names; `None` when the schema has no `required` list.
    required: Option<Box<[Box<str>]>>,
}

impl Signature {
    fn of(spec: &ToolSpec) -> Self {
        let schema = spec.parameters.as_ref();
        let params = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, prop)| Param {
                        name: name.as_str().into(),
                        ty: match prop.get("type") {
                            Some(Value::String(s)) => Some(s.as_str().into()),
                            Some(Value::Array(types)) => types
                                .iter()
                                .filter_map(Value::as_str)
                                .find(|t| *t != "null")
                                .map(Into::into),
                            _ => None,
                        },
                    })
                    .collect()
            });
        let required = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|req| {
                req.iter()
                    .filter_map(Value::as_str)
                    .map(Into::into)
                    .collect()
            });
        Signature { params, required }
    }

    /// The parameter called `name`.
    pub(crate) fn param(&self, name: &str) -> Option<&Param> {
        self.params.as_deref()?.iter().find(|p| &*p.name == name)
    }
}

impl Tools {
    /// Builds a tool set from specs.
    pub fn new(specs: Vec<ToolSpec>) -> Self {
        let sigs = specs.iter().map(Signature::of).collect();
        Tools { specs, sigs }
    }

    /// Parses an OpenAI-format tool list
    /// (`[{"type":"function","function":{"name","description","parameters"}}]`);
    /// bare `{"name", "parameters"}` objects, Anthropic's `input_schema` and a
    /// single object instead of a list are accepted too.
    pub fn from_json(text: &str) -> Result<Self, ToolsError> {
        let value: Value = serde_json::from_str(text).map_err(ToolsError::Json)?;
        Self::from_value(&value)
    }

    /// Like [`Tools::from_json`], from an already parsed value.
    pub fn from_value(value: &Value) -> Result<Self, ToolsError> {
        let items: Vec<&Value> = match value {
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) if o.contains_key("tools") => match &o["tools"] {
                Value::Array(a) => a.iter().collect(),
                _ => return Err(ToolsError::Shape("`tools` is not a list".into())),
            },
            Value::Object(_) => vec![value],
            _ => return Err(ToolsError::Shape("expected a list of tools".into())),
        };
        let mut specs = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let obj = match item.get("function") {
                Some(f @ Value::Object(_)) => f,
                _ => item,
            };
            let name = obj
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ToolsError::Shape(format!("tool {i} has no name")))?;
            let parameters = obj
                .get("parameters")
                .or_else(|| obj.get("input_schema"))
                .or_else(|| obj.get("parametersJsonSchema"))
                .cloned();
            specs.push(ToolSpec {
                name: name.to_owned(),
                parameters,
            });
        }
        Ok(Tools::new(specs))
    }

    /// All tools.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The tool called `name`; failing that, the tool whose name is `name`
    /// with each `_` read as `.` (OpenAI function names cannot hold a dot,
    /// so clients and models write `game_save_progress` for the tool
    /// `game.save_progress`). The name a call reports is always the one the
    /// model wrote.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        Some(&self.specs[self.position(name)?])
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name).or_else(|| {
            self.specs
                .iter()
                .position(|s| dots_as_underscores(&s.name, name))
        })
    }

    /// What the schema of tool `name` (found as [`Tools::get`] finds it)
    /// says of its arguments.
    pub(crate) fn signature(&self, name: &str) -> Option<&Signature> {
        Some(&self.sigs[self.position(name)?])
    }

    /// True when no tool is known.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Whether tool `name` declares parameter `param`: `None` when the tool or
    /// its `properties` are not known (nothing can be said).
    pub fn has_param(&self, name: &str, param: &str) -> Option<bool> {
        let sig = self.signature(name)?;
        Some(sig.params.as_ref()?.iter().any(|p| &*p.name == param))
    }

    /// The one tool whose schema accepts arguments with these `keys`: it
    /// declares every key among its `properties` and each of its `required`
    /// parameters is one of them (a tool listed twice counts once). `None`
    /// when no tool does, when more than one does, or for a tool whose
    /// properties are not given (nothing can be said of it).
    ///
    /// ```
    /// use toolstream::Tools;
    /// let tools = Tools::from_json(
    ///     r#"[{"name": "get_weather", "parameters": {"properties": {"city": {}, "unit": {}}, "required": ["city"]}},
    ///         {"name": "read_file", "parameters": {"properties": {"path": {}}, "required": ["path"]}}]"#,
    /// )
    /// .unwrap();
    /// assert_eq!(tools.fitting(["city", "unit"].into_iter()).unwrap().name, "get_weather");
    /// assert!(tools.fitting(["unit"].into_iter()).is_none()); // `city` is required
    /// ```
    pub fn fitting<'k>(&self, keys: impl Iterator<Item = &'k str> + Clone) -> Option<&ToolSpec> {
        let fits = |sig: &Signature| {
            let Some(params) = sig.params.as_deref() else {
                return false;
            };
            keys.clone().all(|k| params.iter().any(|p| &*p.name == k))
                && sig
                    .required
                    .as_deref()
                    .is_none_or(|req| req.iter().all(|r| keys.clone().any(|k| k == &**r)))
        };
        let mut fit = self
            .specs
            .iter()
            .zip(&self.sigs)
            .filter(|(_, sig)| fits(sig))
            .map(|(spec, _)| spec);
        let first = fit.next()?;
        // A tool listed twice is still one tool.
        fit.all(|s| s.name == first.name).then_some(first)
    }

    /// The schema type (`"integer"`, `"string"`, …) of parameter `param` of tool `name`.
    pub fn param_type(&self, name: &str, param: &str) -> Option<&str> {
        self.signature(name)?.param(param)?.ty.as_deref()
    }
}

/// Everything a [`crate::Parser`] needs to know before the first byte.
///
/// ```
/// use toolstream::{Config, Dialect};
/// let config = Config::default()
///     .with_dialects(vec![Dialect::Hermes])
///     .with_prefill("<think>\n");
/// assert_eq!(config.dialects, vec![Dialect::Hermes]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The dialects to recognise. Empty means auto-detection over every dialect.
    pub dialects: Vec<Dialect>,
    /// The tail of the prompt the output continues (for example `<think>\n`
    /// when the chat template opens the reasoning block itself).
    pub prefill: Option<String>,
    /// The tools the model was offered, if known.
    pub tools: Option<Arc<Tools>>,
    /// Resource limits.
    pub limits: Limits,
    /// Id generator for calls without a model-written id.
    pub ids: IdGenerator,
    /// XML dialects: decode character and entity references (`&lt;` → `<`)
    /// and unwrap `<![CDATA[…]]>` sections in parameter values, recording
    /// [`crate::RepairKind::EntityDecoded`]. Off by default: values are the
    /// model's text as written (as DashScope, vLLM and SGLang keep them).
    pub decode_entities: bool,
    /// A call opened inside a `<think>` block (`<tool_call>`, a DSML
    /// block) ends the reasoning there and is extracted, with a
    /// [`crate::RepairKind::CallInReasoning`] repair. Off by default (calls
    /// in reasoning are thinking); [`Config::for_model`] turns it on for the
    /// families whose real outputs write their call there (Qwen 3.5+ with
    /// an unclosed `<think>`, DeepSeek's DSML generation).
    pub calls_in_reasoning: bool,
    /// Read every call object with the repairer, none with the fast path
    /// for well-formed objects that arrive whole in one feed. Both give
    /// the same events (`tests/fast_calls.rs` holds them to it); the fast
    /// path reads such a call at about half the cost. Off by default: for
    /// comparing the two, in tests and benchmarks.
    pub repairer_only: bool,
}

impl Config {
    /// Sets [`Config::repairer_only`].
    pub fn with_repairer_only(mut self, yes: bool) -> Self {
        self.repairer_only = yes;
        self
    }

    /// Sets [`Config::calls_in_reasoning`].
    pub fn with_calls_in_reasoning(mut self, yes: bool) -> Self {
        self.calls_in_reasoning = yes;
        self
    }

    /// Restricts recognition to `dialects` (empty: auto).
    pub fn with_dialects(mut self, dialects: Vec<Dialect>) -> Self {
        self.dialects = dialects;
        self
    }

    /// Sets the prefill (see [`Config::prefill`]).
    pub fn with_prefill(mut self, prefill: impl Into<String>) -> Self {
        self.prefill = Some(prefill.into());
        self
    }

    /// Sets the known tools.
    pub fn with_tools(mut self, tools: Tools) -> Self {
        self.tools = Some(Arc::new(tools));
        self
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the id generator.
    pub fn with_ids(mut self, ids: IdGenerator) -> Self {
        self.ids = ids;
        self
    }

    /// Sets [`Config::decode_entities`].
    pub fn with_decode_entities(mut self, yes: bool) -> Self {
        self.decode_entities = yes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_fitting_tool() {
        let tools = Tools::from_json(
            r#"[{"name": "ping"},
                {"name": "now", "parameters": {"type": "object", "properties": {}}},
                {"name": "weather", "parameters": {"properties": {"city": {}, "unit": {}}, "required": ["city"]}},
                {"name": "read", "parameters": {"properties": {"path": {}, "lines": {}}}}]"#,
        )
        .unwrap();
        let fit = |keys: &[&str]| tools.fitting(keys.iter().copied()).map(|t| t.name.as_str());
        assert_eq!(fit(&["city"]), Some("weather"));
        assert_eq!(fit(&["unit", "city"]), Some("weather"));
        assert_eq!(fit(&["unit"]), None, "a required parameter is missing");
        assert_eq!(fit(&["city", "days"]), None, "`days` is not declared");
        // Nothing required: any declared keys, none included.
        assert_eq!(fit(&["lines"]), Some("read"));
        // No keys fit both `now` and `read`; `ping` has no schema to judge.
        assert_eq!(fit(&[]), None);
        let twice = Tools::from_json(
            r#"[{"name": "now", "parameters": {"properties": {"tz": {}}}}, {"name": "now", "parameters": {"properties": {"tz": {}}}}]"#,
        )
        .unwrap();
        assert_eq!(
            twice.fitting(["tz"].into_iter()).map(|t| t.name.as_str()),
            Some("now")
        );
        let one =
            Tools::from_json(r#"[{"name": "now", "parameters": {"properties": {}}}]"#).unwrap();
        assert_eq!(
            one.fitting(std::iter::empty()).map(|t| t.name.as_str()),
            Some("now")
        );
    }

    #[test]
    fn tools_are_found_by_their_openai_spelling() {
        let tools = Tools::from_json(
            r#"[{"name": "game.save_progress"}, {"name": "game_save_progress_v2"}, {"name": "a_b"}]"#,
        )
        .unwrap();
        assert_eq!(
            tools.get("game.save_progress").unwrap().name,
            "game.save_progress"
        );
        assert_eq!(
            tools.get("game_save_progress").unwrap().name,
            "game.save_progress"
        );
        assert_eq!(
            tools.get("game_save_progress_v2").unwrap().name,
            "game_save_progress_v2"
        );
        // Only a dot may be written as `_`, never the other way round.
        assert!(tools.get("a.b").is_none());
        assert!(tools.get("game-save-progress").is_none());
        assert!(tools.get("game_save").is_none());
    }

    #[test]
    fn default_ids_count_calls() {
        let ids = IdGenerator::default();
        for i in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(ids.id(i), format!("call_{i}"));
        }
    }
}
