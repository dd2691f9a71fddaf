//! The schema-aware normalizer: tool calls checked and fixed against the
//! tools the model was offered, or a precise error the model can act on.
//!
//! Small models name tools that do not exist (`Get_Weather`,
//! `functions.get_weather`, `tool_name` copied from a format example), write
//! parameter names in the wrong case, send numbers as strings, a single item
//! where an array is declared, stringified or wrapped arguments, `null` for
//! an optional parameter, or a copy of the schema itself. The normalizer
//! resolves the name, the parameter names, undoes
//! wrappers and encodings, coerces values by JSON Schema (unions scored by
//! the cost of their coercions), then validates with the `jsonschema` crate
//! and reports what is still wrong as typed [`CallError`]s with JSON
//! pointers, renderable as a retry message ([`feedback`]).
//!
//! A value that is already valid is never touched: a valid call comes out
//! byte for byte as it went in, with no repair.
//!
//! # Steps
//! 1. tool name: exact, case/separators, namespaces, edit distance,
//!    placeholder (from the arguments) — [`FixKind::NameCase`] …;
//! 2. structure: stringified, wrapped, bare value;
//! 3. parameter names, undeclared keys (`additionalProperties: false`),
//!    `null` for optional parameters;
//! 4. coercion by schema;
//! 5. copied templates (schema copies, placeholders) and validation.
//!
//! Each step has a switch in [`Options`].
//!
//! # One call
//! ```
//! use toolstream::normalize::{Catalog, FixKind};
//! use toolstream::Tools;
//! let tools = Tools::from_json(r#"[{"name": "get_weather", "parameters": {"type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
//!                    "unit": {"enum": ["celsius", "fahrenheit"]}},
//!     "required": ["city"], "additionalProperties": false}}]"#).unwrap();
//! let catalog = Catalog::new(&tools);
//! let out = catalog.normalize("Get_Weather", r#"{"City": "Paris", "days": "3", "unit": "Celsius"}"#);
//! assert!(out.report.is_ok());
//! assert_eq!(out.name, "get_weather");
//! assert_eq!(out.arguments, r#"{"city": "Paris", "days": 3, "unit": "celsius"}"#);
//! let kinds: Vec<FixKind> = out.report.fixes.iter().map(|f| f.kind).collect();
//! assert_eq!(kinds, [FixKind::NameCase, FixKind::ParameterName, FixKind::StringToInteger, FixKind::EnumValue]);
//! ```
//!
//! # A stream
//! [`Normalizer`] sits on an [`Event`](crate::Event) stream and rewrites the
//! calls in it while they stream; see its docs.
//!
//! # Cost
//! A call that already fits its tool is vouched for member by member while
//! it streams (a precompiled check of the schema subset tool lists use) and
//! ends without being read into a `serde_json::Value` or run through
//! `jsonschema`; anything else takes the full check. A server that sees
//! the same tool list on every request gets its [`Catalog`] from a
//! [`CatalogCache`] (compiled once per list).

mod cache;
mod coerce;
mod error;
mod fast;
pub mod feedback;
mod names;
mod options;
mod params;
mod rewrite;
mod stream;
mod structure;
mod template;
mod tools_file;
mod validate;

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

pub use cache::CatalogCache;
use error::Fixes;
pub use error::{CallError, ErrorKind, Fix, FixKind, InvalidReason};
pub use options::{NormalizeLimits, Options};
pub use stream::{Normalized, Normalizer};
pub use tools_file::{read_tools, read_tools_value, ToolsFileError, ToolsShape};

use crate::{ToolCall, Tools};
use coerce::{Coercer, KeyPlan};
use names::Resolution;
use rewrite::Rewriter;

/// Bytes as a `String`, without a copy when they are UTF-8 (they are
/// whenever the input was).
pub(crate) fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// One offered tool, its schema read and compiled once.
pub(crate) struct CompiledTool {
    pub(crate) name: String,
    /// The schema, sanitized (BFCL/Python type names → JSON Schema's); `{}` when none was given.
    pub(crate) schema: Value,
    validator: Option<jsonschema::Validator>,
    schema_error: Option<String>,
    /// The schema in the fast check's subset, when it is in it.
    pub(crate) fast: Option<fast::FastObject>,
    /// The declared properties, by name (sorted): what the rewriter asks
    /// of each member, answered once here.
    props_list: Vec<Prop>,
    /// The name [`names::fold`]ed (a wrapper key may be the tool's name).
    pub(crate) folded_name: String,
    /// The fast check's required keys as a mask of `props_list` positions,
    /// when every one is declared at a position below 64.
    pub(crate) required_mask: Option<u64>,
    /// An undeclared top-level key is dropped (`additionalProperties:
    /// false`, no `patternProperties`, dropping switched on).
    drops_undeclared: bool,
    /// What the schema says of an undeclared key's value: `None` nothing
    /// (`additionalProperties` absent or not a schema object), else whether
    /// any string fits it ([`coerce::Coercer::value_schema`] of such a key,
    /// answered once here).
    pub(crate) undeclared_any_string: Option<bool>,
    /// The `missing_required` error of each of the fast check's required
    /// keys, made once here (a call that leaves one out gets a copy).
    missing: Vec<(String, CallError)>,
}

/// What the rewriter needs to know of one declared property.
#[derive(Debug)]
pub(crate) struct Prop {
    name: String,
    /// `name` [`names::fold`]ed (for parameter-name resolution).
    folded: String,
    /// Any string is valid for it as it is: a string value streams through.
    pub(crate) streams_string: bool,
    /// Its schema in the fast check's subset, when it is in it.
    pub(crate) fast: Option<fast::Fast>,
}

impl CompiledTool {
    /// The position of the declared property `key` (in sorted order).
    pub(crate) fn prop_index(&self, key: &str) -> Option<usize> {
        self.props_list
            .binary_search_by(|p| p.name.as_str().cmp(key))
            .ok()
    }

    /// [`CompiledTool::prop_index`] of a key given as bytes (strings
    /// order as their bytes do).
    pub(crate) fn prop_index_bytes(&self, key: &[u8]) -> Option<usize> {
        self.props_list
            .binary_search_by(|p| p.name.as_bytes().cmp(key))
            .ok()
    }

    /// The declared property at `i` (from [`CompiledTool::prop_index`]).
    pub(crate) fn prop_at(&self, i: usize) -> &Prop {
        &self.props_list[i]
    }

    /// What to do with the undeclared top-level key `key` (`taken`: keys
    /// written already): [`coerce::Coercer::plan_key`] on the schema's
    /// root, answered from the names folded once per catalog.
    pub(crate) fn plan_key(
        &self,
        key: &str,
        opts: &Options,
        taken: &dyn Fn(&str) -> bool,
    ) -> KeyPlan {
        if self.prop_index(key).is_some() {
            return KeyPlan::Keep;
        }
        if opts.param_names {
            let pick = |pred: &dyn Fn(&Prop) -> bool| -> Option<String> {
                let mut hit = None;
                for p in &self.props_list {
                    if pred(p) {
                        if hit.is_some() {
                            return None;
                        }
                        hit = Some(p);
                    }
                }
                hit.filter(|p| !taken(&p.name)).map(|p| p.name.clone())
            };
            let mut to = None;
            // `fold(key)` is empty only when every character is a separator.
            if !names::folds_to(key, "") {
                to = pick(&|p| names::folds_to(key, &p.folded));
            }
            if to.is_none() {
                let folded = names::fold(key);
                if folded.chars().count() >= 3 {
                    to = pick(&|p| names::distance(&folded, &p.folded, 1).is_some());
                }
            }
            if let Some(to) = to {
                return KeyPlan::Rename(to);
            }
        }
        if self.drops_undeclared {
            return KeyPlan::Drop(FixKind::DroppedParameter);
        }
        KeyPlan::Keep
    }

    pub(crate) fn props(&self) -> Option<&Map<String, Value>> {
        self.schema.get("properties").and_then(Value::as_object)
    }

    /// The tool's only required parameter, if it has exactly one.
    pub(crate) fn single_required(&self) -> Option<&str> {
        match self
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([one]) => one.as_str(),
            _ => None,
        }
    }
}

/// The offered tools, each schema compiled once: what the normalizer checks
/// calls against. Build one per tool set and share it (it is `Send + Sync`;
/// a [`Normalizer`] holds it in an `Arc`).
pub struct Catalog {
    tools: Vec<CompiledTool>,
    names: Vec<String>,
    /// `names`, each [`names::fold`]ed (for resolution and suggestions).
    folded_names: Vec<String>,
    /// Some offered name carries a namespace prefix ([`names::any_namespaced`]).
    namespaced: bool,
    by_name: HashMap<String, usize>,
    /// Names that needed more than an exact match, resolved before.
    memo: names::Memo,
    options: Options,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.names)
            .field("options", &self.options)
            .finish()
    }
}

/// What the normalizer did to one call, and what is still wrong with it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The tool name as the model wrote it, when the call carries another
    /// (a repaired name, a placeholder resolved to a tool); `None` when the
    /// call's name is the one written. [`Report::name_as_written`] gives
    /// it either way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_name: Option<String>,
    /// The repairs made, in order (the name's first): at most
    /// [`NormalizeLimits::max_repairs`] of them, the first ones.
    pub fixes: Vec<Fix>,
    /// Repairs made but not listed in [`Report::fixes`] (over
    /// [`NormalizeLimits::max_repairs`]): 0 unless the list is full.
    #[serde(skip_serializing_if = "is_zero")]
    pub fixes_omitted: usize,
    /// The problems left; empty for a valid call.
    pub errors: Vec<CallError>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Report {
    /// A report from the name's repair (if any) and the arguments' ones,
    /// listing at most `max` in all.
    pub(crate) fn build(
        written_name: Option<String>,
        name_fix: Option<Fix>,
        fixes: Fixes,
        errors: Vec<CallError>,
        max: usize,
    ) -> Report {
        if name_fix.is_none() && fixes.list.len() <= max {
            // Nothing to merge: the list as it is (the common case).
            return Report {
                written_name,
                fixes: fixes.list,
                fixes_omitted: fixes.omitted,
                errors,
            };
        }
        let mut all = Fixes::new(max);
        if let Some(f) = name_fix {
            all.push(f);
        }
        all.absorb(fixes);
        Report {
            written_name,
            fixes: all.list,
            fixes_omitted: all.omitted,
            errors,
        }
    }

    /// The tool name as the model wrote it, given the name the call
    /// carries (`ToolCall::name` of the normalized call, `Outcome::name`).
    ///
    /// ```
    /// use toolstream::normalize::Catalog;
    /// use toolstream::Tools;
    /// let tools = Tools::from_json(r#"[{"name": "get_weather", "parameters": {"type": "object"}}]"#).unwrap();
    /// let out = Catalog::new(&tools).normalize("GetWeather", "{}");
    /// assert_eq!(out.name, "get_weather");
    /// assert_eq!(out.report.name_as_written(&out.name), "GetWeather");
    /// ```
    pub fn name_as_written<'a>(&'a self, call_name: &'a str) -> &'a str {
        self.written_name.as_deref().unwrap_or(call_name)
    }

    /// True when no repair was made (listed or omitted).
    pub fn unrepaired(&self) -> bool {
        self.fixes.is_empty() && self.fixes_omitted == 0
    }

    /// True when the call is valid for its tool (after the repairs).
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The retry message for the model (see [`feedback::message`]); `None`
    /// when the call is valid.
    pub fn feedback(&self, tool: &str) -> Option<String> {
        (!self.is_ok()).then(|| feedback::message(tool, &self.errors))
    }
}

/// A normalized call: the one-shot API's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The resolved tool name (as written when it resolved to no tool).
    pub name: String,
    /// The normalized arguments text: the input itself when nothing was
    /// repaired; a JSON object unless the arguments could not be made one
    /// (then an [`ErrorKind::InvalidArguments`] error says so).
    pub arguments: String,
    /// Repairs and errors.
    pub report: Report,
}

impl Outcome {
    /// The normalized arguments as a value (`Value::Null` if they are not JSON).
    pub fn arguments_value(&self) -> Value {
        serde_json::from_str(&self.arguments).unwrap_or(Value::Null)
    }

    /// The retry message for the model, when the call is not valid.
    pub fn feedback(&self) -> Option<String> {
        self.report.feedback(&self.name)
    }
}

impl Catalog {
    /// Compiles the schemas of `tools` with the default [`Options`].
    pub fn new(tools: &Tools) -> Self {
        Catalog::with_options(tools, Options::default())
    }

    /// Compiles the schemas of `tools`. A schema that does not compile (a
    /// remote `$ref`, a malformed keyword) leaves its tool without
    /// validation; coercion still runs ([`Catalog::schema_errors`] lists them).
    pub fn with_options(tools: &Tools, options: Options) -> Self {
        let mut compiled = Vec::with_capacity(tools.specs().len());
        let mut by_name = HashMap::new();
        for (i, spec) in tools.specs().iter().enumerate() {
            let mut schema = spec
                .parameters
                .clone()
                .unwrap_or_else(|| Value::Object(Map::new()));
            validate::sanitize(&mut schema);
            let (validator, schema_error) = match validate::compile(&schema) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            };
            by_name.entry(spec.name.clone()).or_insert(i);
            let fast = schema.as_object().and_then(|m| fast::object(m, 0));
            let c = Coercer {
                root: &schema,
                opts: &options,
            };
            let mut props_list: Vec<Prop> = c
                .resolve(&schema)
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| {
                    p.iter()
                        .map(|(k, ps)| Prop {
                            name: k.clone(),
                            folded: names::fold(k),
                            streams_string: c.any_string_conforms(ps),
                            fast: fast
                                .as_ref()
                                .and_then(|f| f.props.get(k).cloned().flatten()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            props_list.sort_by(|a, b| a.name.cmp(&b.name));
            let position = |k: &str| {
                props_list
                    .binary_search_by(|p| p.name.as_str().cmp(k))
                    .ok()
                    .filter(|&i| i < 64)
            };
            let required_mask = fast.as_ref().and_then(|f| {
                f.required
                    .iter()
                    .try_fold(0u64, |m, r| Some(m | 1 << position(r)?))
            });
            let root = c.resolve(&schema);
            let drops_undeclared = options.drop_unknown
                && root.get("additionalProperties") == Some(&Value::Bool(false))
                && root.get("patternProperties").is_none();
            let missing = fast
                .as_ref()
                .map(|f| {
                    let props = schema.get("properties").and_then(Value::as_object);
                    f.required
                        .iter()
                        .map(|r| {
                            (
                                r.clone(),
                                validate::missing("", r, props.and_then(|p| p.get(r))),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let undeclared_any_string = root
                .get("additionalProperties")
                .filter(|a| a.is_object())
                .map(|a| c.any_string_conforms(a));
            compiled.push(CompiledTool {
                drops_undeclared,
                missing,
                undeclared_any_string,
                name: spec.name.clone(),
                folded_name: names::fold(&spec.name),
                schema,
                validator,
                schema_error,
                fast,
                props_list,
                required_mask,
            });
        }
        let names: Vec<String> = compiled.iter().map(|t| t.name.clone()).collect();
        Catalog {
            namespaced: names::any_namespaced(&names),
            names,
            folded_names: compiled.iter().map(|t| names::fold(&t.name)).collect(),
            tools: compiled,
            by_name,
            memo: names::Memo::default(),
            options,
        }
    }

    /// The options in force.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The offered tool names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The tools whose schema did not compile, with the compiler's message.
    pub fn schema_errors(&self) -> Vec<(&str, &str)> {
        self.tools
            .iter()
            .filter_map(|t| Some((t.name.as_str(), t.schema_error.as_deref()?)))
            .collect()
    }

    pub(crate) fn tool(&self, i: usize) -> &CompiledTool {
        &self.tools[i]
    }

    pub(crate) fn coercer(&self, i: usize) -> Coercer<'_> {
        Coercer {
            root: &self.tools[i].schema,
            opts: &self.options,
        }
    }

    /// Resolves a name without looking at arguments.
    pub(crate) fn resolve(&self, name: &str) -> Resolution {
        // A short list is searched in place (cheaper than hashing the name).
        let exact = if self.names.len() <= 16 {
            self.names.iter().position(|n| n == name)
        } else {
            self.by_name.get(name).copied()
        };
        if let Some(i) = exact {
            return Resolution::Tool(i, None);
        }
        self.memo
            .resolution(self.options.limits.max_remembered_names, name, || {
                names::resolve_in(
                    &self.names,
                    &self.folded_names,
                    self.namespaced,
                    name,
                    &self.options,
                )
            })
    }

    /// The `unknown_tool` error for `name`.
    pub(crate) fn unknown(&self, name: &str, placeholder: bool) -> CallError {
        let mut e = CallError::new(
            ErrorKind::UnknownTool,
            "",
            if placeholder {
                format!("`{name}` is a placeholder, not a tool name, and no single tool fits the arguments")
            } else {
                format!("unknown tool `{name}`")
            },
        );
        e.candidates = self
            .memo
            .closest(self.options.limits.max_remembered_names, name, || {
                names::closest(
                    &self.names,
                    &self.folded_names,
                    name,
                    self.options.limits.max_suggestions,
                )
            });
        e.suggestion = Some("call one of the offered tools by its exact name".into());
        e
    }

    /// The end-of-call checks of a rewritten call: copied templates, then
    /// validation of the output.
    pub(crate) fn check(&self, rw: &Rewriter) -> Vec<CallError> {
        // The common case: a call that already fits, vouched for member by
        // member while it streamed (see `fast`): no `Value`, no `jsonschema`;
        // or whose only problem is required keys left out (the errors
        // `jsonschema` would give, in its order: tested).
        let tool = self.tool(rw.tool());
        // Arguments held and decoded are vouched for by their nested
        // rewriter once the value as written is known not to be a template.
        let vouched = match &rw.decoded {
            Some(d) if template::detect(d, tool.props()).is_none() => rw.vouched_output(tool),
            Some(_) => None,
            None => rw.vouched(tool),
        };
        match vouched {
            Some(missing) if missing.is_empty() => Vec::new(),
            Some(missing) => missing
                .into_iter()
                .take(self.options.limits.max_errors)
                .map(|name| match tool.missing.iter().find(|(r, _)| r == name) {
                    Some((_, e)) => e.clone(),
                    None => validate::missing("", name, tool.props().and_then(|p| p.get(name))),
                })
                .collect(),
            None => self.check_full(rw),
        }
    }

    /// [`Catalog::check`] without the fast path.
    pub(crate) fn check_full(&self, rw: &Rewriter) -> Vec<CallError> {
        let mut errors = rw.errors.clone();
        if !errors.is_empty() {
            return errors;
        }
        let tool = self.tool(rw.tool());
        // The arguments as written: the output itself when nothing changed
        // (read once), else read apart — and the output read only once no
        // copied template ended the check.
        let same = rw.decoded.is_none() && rw.input.trim_ascii() == rw.output.as_slice();
        let mut output: Option<Option<Value>> = None;
        let read_apart: Option<Value>;
        if same {
            output = Some(serde_json::from_slice::<Value>(&rw.output).ok());
        }
        let input = if let Some(d) = &rw.decoded {
            Some(d)
        } else if same {
            output.as_ref().and_then(Option::as_ref)
        } else {
            read_apart = serde_json::from_slice(&rw.input).ok();
            read_apart.as_ref()
        };
        // Inside the wrappers streamed into (`{"arguments": {…}}`).
        let mut input = input;
        for _ in 0..rw.unwraps {
            match input {
                Some(Value::Object(m)) if m.len() == 1 => {
                    input = m.values().next().filter(|v| v.is_object());
                }
                _ => break,
            }
        }
        if let Some(reason) = input.and_then(|v| template::detect(v, tool.props())) {
            let mut e = CallError::new(
                ErrorKind::InvalidArguments,
                "",
                match reason {
                    InvalidReason::SchemaCopy => {
                        "the arguments are a copy of the tool's schema, not values"
                    }
                    _ => "the arguments are a placeholder from an example, not values",
                },
            );
            e.reason = Some(reason);
            e.received = input.map(|v| error::short(v, 60));
            errors.push(e);
            return errors;
        }
        let output = match output {
            Some(o) => o,
            None => serde_json::from_slice::<Value>(&rw.output).ok(),
        };
        match output {
            Some(v @ Value::Object(_)) => {
                if let Some(validator) = tool.validator.as_ref().filter(|va| !va.is_valid(&v)) {
                    errors.extend(validate::errors(
                        validator,
                        &v,
                        tool.props(),
                        self.options.limits.max_errors,
                    ));
                }
            }
            _ => {
                let mut e = CallError::new(
                    ErrorKind::InvalidArguments,
                    "",
                    "the arguments are not a complete JSON object",
                );
                e.reason = Some(InvalidReason::NotAnObject);
                errors.push(e);
            }
        }
        errors
    }

    /// Runs the rewriter for tool `i` over the whole `arguments`.
    fn rewrite(&self, i: usize, arguments: &[u8]) -> (Vec<u8>, Fixes, Vec<CallError>) {
        let mut rw = rewrite::pooled(i, self.options.limits.max_repairs);
        rw.feed(self, arguments);
        rw.finish(self);
        let errors = self.check(&rw);
        let out = (
            std::mem::take(&mut rw.output),
            std::mem::take(&mut rw.fixes),
            errors,
        );
        rewrite::recycle(rw);
        out
    }

    /// For a placeholder name: the one tool whose schema accepts the
    /// arguments (after normalization, with nothing dropped and every key
    /// declared), with its result.
    /// Arguments longer than [`NormalizeLimits::max_held_call_bytes`] are
    /// not tried (a stream could not hold them).
    pub(crate) fn rescue(&self, arguments: &[u8]) -> Option<(usize, Vec<u8>, Fixes)> {
        if arguments.len() > self.options.limits.max_held_call_bytes {
            return None;
        }
        let mut found = None;
        for i in 0..self.tools.len() {
            if self.names[..i].contains(&self.names[i]) {
                continue;
            }
            let mut rw = rewrite::pooled(i, self.options.limits.max_repairs);
            rw.feed(self, arguments);
            rw.finish(self);
            // A parameter dropped or an undeclared one kept rules the tool
            // out before its (costlier) end-of-call check.
            if rw.fixes.made(FixKind::DroppedParameter) || rw.undeclared {
                rewrite::recycle(rw);
                continue;
            }
            // Vouched for member by member: valid, every key declared.
            let vouched = rw.fits(self.tool(i));
            let errors = if vouched {
                Vec::new()
            } else {
                self.check_full(&rw)
            };
            let (out, fixes) = (
                std::mem::take(&mut rw.output),
                std::mem::take(&mut rw.fixes),
            );
            rewrite::recycle(rw);
            // Fits: valid, nothing dropped, every key declared (a tool
            // that declares no properties fits only `{}`).
            let declared = |v: &Value| {
                v.as_object().is_some_and(|m| {
                    m.keys()
                        .all(|k| self.tools[i].props().is_some_and(|p| p.contains_key(k)))
                })
            };
            let fits = errors.is_empty()
                && (vouched || serde_json::from_slice::<Value>(&out).is_ok_and(|v| declared(&v)));
            if fits {
                if found.is_some() {
                    return None;
                }
                found = Some((i, out, fixes));
            }
        }
        found
    }

    /// Normalizes one call: `name` as the model wrote it, `arguments` its
    /// arguments text (an object, a JSON string of one, a bare value, …).
    pub fn normalize(&self, name: &str, arguments: &str) -> Outcome {
        self.normalize_bytes(name, arguments.as_bytes())
    }

    /// Like [`Catalog::normalize`], for arguments already parsed (a string
    /// value is taken as arguments given as a JSON string).
    pub fn normalize_value(&self, name: &str, arguments: &Value) -> Outcome {
        let text = serde_json::to_vec(arguments).unwrap_or_default();
        self.normalize_bytes(name, &text)
    }

    /// Normalizes a parsed [`ToolCall`]: the call with its resolved name and
    /// normalized arguments (its id, index and parser repairs kept), and the report.
    pub fn normalize_call(&self, call: &ToolCall) -> (ToolCall, Report) {
        let out = self.normalize(&call.name, &call.arguments);
        let mut c = call.clone();
        c.name = out.name.into();
        c.arguments = out.arguments;
        (c, out.report)
    }

    /// The repair of a placeholder name resolved to tool `i`.
    pub(crate) fn placeholder_fix(&self, written: &str, i: usize) -> Fix {
        Fix {
            kind: FixKind::NamePlaceholder,
            path: String::new(),
            from: Some(written.to_owned()),
            to: Some(self.names[i].clone()),
        }
    }

    fn normalize_bytes(&self, name: &str, arguments: &[u8]) -> Outcome {
        // Passed on under the name as written unless a tool is found.
        let mut report = Report::default();
        let max = self.options.limits.max_repairs;
        let verbatim = || String::from_utf8_lossy(arguments).into_owned();
        match self.resolve(name) {
            Resolution::Tool(i, fix) => {
                let (out, fixes, errors) = self.rewrite(i, arguments);
                Outcome {
                    name: self.names[i].clone(),
                    arguments: utf8(out),
                    report: Report::build(
                        fix.is_some().then(|| name.to_owned()),
                        fix,
                        fixes,
                        errors,
                        max,
                    ),
                }
            }
            Resolution::Placeholder => match self.rescue(arguments) {
                Some((i, out, fixes)) => {
                    let fix = Some(self.placeholder_fix(name, i));
                    let report = Report::build(Some(name.to_owned()), fix, fixes, Vec::new(), max);
                    Outcome {
                        name: self.names[i].clone(),
                        arguments: utf8(out),
                        report,
                    }
                }
                None => {
                    report.errors.push(self.unknown(name, true));
                    Outcome {
                        name: name.to_owned(),
                        arguments: verbatim(),
                        report,
                    }
                }
            },
            Resolution::Unknown => {
                report.errors.push(self.unknown(name, false));
                Outcome {
                    name: name.to_owned(),
                    arguments: verbatim(),
                    report,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
