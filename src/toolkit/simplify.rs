//! Schema simplification for small models (seed 003, approaches 1 and 5),
//! with an exact inverse for arguments.
//!
//! [`SimplifyOptions::default`] is 003's default strategy: optional
//! parameters kept, nested objects flattened into dotted keys, enums moved
//! into the description as `(options: a, b)`, descriptions cut to 100
//! characters, `additionalProperties` dropped — plus local `$ref`s inlined
//! first. [`Profile`] holds the per-model strategies: 003's
//! `qwen3-coder-30b` and `gpt-oss-20b`, the two small models measured in
//! #40's prompt table ([`measured`]), and one per size class (see
//! `docs/toolkit.md`).
//!
//! 003 never says how to get back. [`Simplified::restore`] does: a call
//! made against the simplified schema becomes a call against the original
//! (dotted keys nested again). The enum that moved into a description is not
//! lost: the original schema still has it, and the normalizer checks calls
//! against the original.
//!
//! Flattening is exact because an object is flattened only when a present
//! object always leaves a key behind — it has a required property — and
//! none of its property names holds the separator. Other objects stay
//! nested.
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::{simplify::{simplify, SimplifyOptions}, Tool};
//! let tool = Tool::new("Edit", "Edit a file.", json!({
//!     "type": "object",
//!     "properties": {
//!         "file": {"type": "object", "properties": {
//!             "path": {"type": "string"}, "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]}
//!         }, "required": ["path"]},
//!         "text": {"type": "string"}
//!     },
//!     "required": ["file", "text"], "additionalProperties": false
//! }));
//! let s = simplify(&tool, &SimplifyOptions::default());
//! let props = &s.tool.parameters["properties"];
//! assert_eq!(props["file.encoding"]["description"], "(options: utf-8, latin-1)");
//! assert_eq!(s.tool.parameters["required"], json!(["file.path", "text"]));
//! let call = json!({"file.path": "a.rs", "text": "x"});
//! assert_eq!(s.restore(&call), json!({"file": {"path": "a.rs"}, "text": "x"}));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::adapt::{inline_refs, SchemaLoss};
use super::registry::{ModelInfo, SizeClass};
use super::Tool;

/// What to simplify (003's `SimplificationStrategy`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimplifyOptions {
    /// Remove optional parameters (keep only required ones). 003: off.
    pub remove_optional: bool,
    /// Flatten nested objects into dotted keys. 003: on.
    pub flatten_nested: bool,
    /// Move enums into the description as `(options: a, b)`. 003: on.
    pub enums_to_description: bool,
    /// Cut descriptions to this many characters. 003: 100.
    pub max_description: Option<usize>,
    /// Drop `additionalProperties`. 003: on.
    pub drop_additional_properties: bool,
    /// Inline local `$ref`s (needed to flatten what they point at). On.
    pub inline_refs: bool,
    /// How deep `$ref`s are inlined.
    pub max_ref_depth: usize,
    /// The separator of flattened keys. `.`.
    pub separator: String,
}

impl Default for SimplifyOptions {
    fn default() -> Self {
        SimplifyOptions {
            remove_optional: false,
            flatten_nested: true,
            enums_to_description: true,
            max_description: Some(100),
            drop_additional_properties: true,
            inline_refs: true,
            max_ref_depth: 8,
            separator: ".".into(),
        }
    }
}

impl SimplifyOptions {
    /// No simplification at all.
    pub fn none() -> SimplifyOptions {
        SimplifyOptions {
            remove_optional: false,
            flatten_nested: false,
            enums_to_description: false,
            max_description: None,
            drop_additional_properties: false,
            inline_refs: false,
            max_ref_depth: 8,
            separator: ".".into(),
        }
    }

    /// Whether these options change nothing.
    pub fn is_identity(&self) -> bool {
        !(self.remove_optional
            || self.flatten_nested
            || self.enums_to_description
            || self.max_description.is_some()
            || self.drop_additional_properties
            || self.inline_refs)
    }
}

/// A named simplification strategy (003 approach 5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// The profile's name.
    pub name: &'static str,
    /// Its options.
    pub options: SimplifyOptions,
}

/// The measured small models' profiles: the two PyPI models of #40's prompt
/// table (`docs/prompts.md`). Each setting follows from that model's
/// recorded replies by the rules `tests/prompt_table_replay.rs` checks:
/// the description cap is the one of the size-class prompt variant that
/// made the most valid calls of the right tool on Claude Code's schemas
/// (80, 200 or 1,000 characters; ties: the shorter), and optional
/// parameters are removed when the model's calls that wrote one broke on
/// it at least as often as they got it right. Whether the profile
/// simplifies at all comes from the direct run (the same prompts sent
/// Claude Code's schemas simplified and as they are): where the simplified
/// schemas made fewer valid calls of the right tool, the profile sends the
/// schemas unsimplified ([`SimplifyOptions::none`]).
pub mod measured {
    /// SmolLM2-135M-Instruct: simplify at all. The direct run: 0 valid
    /// calls of the right tool with its simplified schemas against 2 with
    /// Claude Code's own (40 replies each), so no.
    pub const SMOLLM2_SIMPLIFY: bool = false;
    /// Gemma-3-270M-it: simplify at all. The direct run: 0 valid calls
    /// either way (40 replies each), a tie, so 003's default (simplify)
    /// stays.
    pub const GEMMA3_SIMPLIFY: bool = true;
    /// SmolLM2-135M-Instruct: description cap (characters).
    pub const SMOLLM2_MAX_DESCRIPTION: usize = 80;
    /// SmolLM2-135M-Instruct: remove optional parameters.
    pub const SMOLLM2_REMOVE_OPTIONAL: bool = false;
    /// Gemma-3-270M-it: description cap (characters).
    pub const GEMMA3_MAX_DESCRIPTION: usize = 80;
    /// Gemma-3-270M-it: remove optional parameters.
    pub const GEMMA3_REMOVE_OPTIONAL: bool = false;
}

/// A measured profile's options: 003's default strategy with the measured
/// settings, or no simplification where it lost ([`measured`]).
fn measured_options(
    simplify: bool,
    remove_optional: bool,
    max_description: usize,
) -> SimplifyOptions {
    if simplify {
        SimplifyOptions {
            remove_optional,
            max_description: Some(max_description),
            ..SimplifyOptions::default()
        }
    } else {
        SimplifyOptions::none()
    }
}

impl Profile {
    /// The named profiles: 003's `qwen3-coder-30b` and `gpt-oss-20b`; the
    /// measured `smollm2-135m` and `gemma-3-270m` ([`measured`]); `small`,
    /// `medium`, `large` by size class; `default` (003's default strategy)
    /// and `none`.
    pub const NAMES: [&'static str; 9] = [
        "qwen3-coder-30b",
        "gpt-oss-20b",
        "smollm2-135m",
        "gemma-3-270m",
        "small",
        "medium",
        "large",
        "default",
        "none",
    ];

    /// A profile by name (aliases: `qwen3-coder`, `gpt-oss`, `smollm2`,
    /// `gemma3-270m`, `claude` = `none`).
    ///
    /// ```
    /// use toolstream::toolkit::simplify::Profile;
    /// let p = Profile::named("gpt-oss-20b").unwrap();
    /// assert!(p.options.remove_optional);
    /// assert_eq!(p.options.max_description, Some(50));
    /// assert!(Profile::named("nope").is_none());
    /// ```
    pub fn named(name: &str) -> Option<Profile> {
        use measured::*;
        let d = SimplifyOptions::default;
        let (name, options) = match name.trim().to_ascii_lowercase().as_str() {
            // 003: removeOptional false, flatten, enums, 80, additionalProperties dropped.
            "qwen3-coder-30b" | "qwen3-coder" => (
                "qwen3-coder-30b",
                SimplifyOptions {
                    max_description: Some(80),
                    ..d()
                },
            ),
            // 003: "more aggressive for weaker model": optional removed, 50.
            "gpt-oss-20b" | "gpt-oss" => (
                "gpt-oss-20b",
                SimplifyOptions {
                    remove_optional: true,
                    max_description: Some(50),
                    ..d()
                },
            ),
            "smollm2-135m" | "smollm2" => (
                "smollm2-135m",
                measured_options(
                    SMOLLM2_SIMPLIFY,
                    SMOLLM2_REMOVE_OPTIONAL,
                    SMOLLM2_MAX_DESCRIPTION,
                ),
            ),
            "gemma-3-270m" | "gemma3-270m" => (
                "gemma-3-270m",
                measured_options(
                    GEMMA3_SIMPLIFY,
                    GEMMA3_REMOVE_OPTIONAL,
                    GEMMA3_MAX_DESCRIPTION,
                ),
            ),
            // Small models not measured: what both measured small models
            // agree on, the stricter setting where they differ; no
            // simplification when it lost on either.
            "small" => (
                "small",
                measured_options(
                    SMOLLM2_SIMPLIFY && GEMMA3_SIMPLIFY,
                    SMOLLM2_REMOVE_OPTIONAL || GEMMA3_REMOVE_OPTIONAL,
                    SMOLLM2_MAX_DESCRIPTION.min(GEMMA3_MAX_DESCRIPTION),
                ),
            ),
            // Medium models: 003's entry for its medium model (Qwen3-Coder-30B).
            "medium" => (
                "medium",
                SimplifyOptions {
                    max_description: Some(80),
                    ..d()
                },
            ),
            "large" | "none" | "claude" => (
                if name.trim().eq_ignore_ascii_case("large") {
                    "large"
                } else {
                    "none"
                },
                SimplifyOptions::none(),
            ),
            "default" => ("default", d()),
            _ => return None,
        };
        Some(Profile { name, options })
    }

    /// The profile for a model (a registry entry): 003's own entries by
    /// name (Qwen3-Coder and gpt-oss below the large class), the measured
    /// models' for their families up to 0.5 B parameters (SmolLM2-135M and
    /// -360M; Gemma 3 270M), else by size class (`large`: none, 003's
    /// Claude entry).
    ///
    /// ```
    /// use toolstream::toolkit::simplify::Profile;
    /// use toolstream::toolkit::Registry;
    /// let r = Registry::builtin();
    /// assert_eq!(Profile::for_model(&r.lookup("ollama/qwen3-coder:30b")).name, "qwen3-coder-30b");
    /// assert_eq!(Profile::for_model(&r.lookup("SmolLM2-135M-Instruct.Q4_1.gguf")).name, "smollm2-135m");
    /// assert_eq!(Profile::for_model(&r.lookup("claude-sonnet-4-20250514")).name, "large");
    /// ```
    pub fn for_model(m: &ModelInfo) -> Profile {
        let lname = m.name.to_ascii_lowercase();
        let tiny = m.params_b.is_some_and(|p| p <= 0.5);
        let by_name = if lname.contains("qwen3-coder") && m.size_class != SizeClass::Large {
            Profile::named("qwen3-coder-30b")
        } else if m.family == "gpt-oss" && m.size_class != SizeClass::Large {
            Profile::named("gpt-oss-20b")
        } else if m.family == "smollm" && tiny && !lname.contains("smollm3") {
            Profile::named("smollm2-135m")
        } else if m.family == "gemma" && tiny {
            Profile::named("gemma-3-270m")
        } else {
            None
        };
        by_name.unwrap_or_else(|| {
            match m.size_class {
                SizeClass::Small => Profile::named("small"),
                SizeClass::Medium => Profile::named("medium"),
                SizeClass::Large => Profile::named("large"),
            }
            .unwrap_or_else(|| Profile {
                name: "none",
                options: SimplifyOptions::none(),
            })
        })
    }
}

/// A simplified tool and the way back.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Simplified {
    /// The tool to send.
    pub tool: Tool,
    /// The flattened objects, as paths of property names.
    pub flattened: Vec<Vec<String>>,
    /// The separator used.
    pub separator: String,
    /// Top-level parameters kept as they were (a name holding the separator
    /// is not a flattened key).
    pub kept: Vec<String>,
    /// The optional parameters removed (paths).
    pub removed: Vec<String>,
    /// Everything that changed, for a report.
    pub changes: Vec<SchemaLoss>,
}

/// Simplifies one tool.
pub fn simplify(tool: &Tool, opts: &SimplifyOptions) -> Simplified {
    let mut changes = Vec::new();
    let mut schema = if opts.inline_refs {
        inline_refs(&tool.parameters, opts.max_ref_depth, &mut changes)
    } else {
        tool.parameters.clone()
    };
    let mut removed = Vec::new();
    if opts.remove_optional {
        remove_optional(&mut schema, "", &mut removed);
        for r in &removed {
            changes.push(SchemaLoss {
                path: format!(".properties{r}"),
                reason: "optional parameter removed".into(),
            });
        }
    }
    let mut flattened = Vec::new();
    let mut kept = Vec::new();
    if opts.flatten_nested {
        let before: Vec<String> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        flatten_schema(&mut schema, &opts.separator, &mut flattened);
        kept = before
            .into_iter()
            .filter(|k| k.contains(opts.separator.as_str()))
            .filter(|k| !flattened.iter().any(|f| f.len() == 1 && &f[0] == k))
            .collect();
        for f in &flattened {
            changes.push(SchemaLoss {
                path: format!(".properties.{}", f.join(".properties.")),
                reason: format!(
                    "flattened into `{}{}…` keys",
                    f.join(&opts.separator),
                    opts.separator
                ),
            });
        }
    }
    tidy(&mut schema, opts, "", &mut changes);
    let mut out = tool.clone();
    if let (Some(max), Some(d)) = (opts.max_description, &tool.description) {
        if d.chars().count() > max {
            out.description = Some(shorten(d, max));
            changes.push(SchemaLoss {
                path: "description".into(),
                reason: format!("cut to {max} characters"),
            });
        }
    }
    out.parameters = schema;
    Simplified {
        tool: out,
        flattened,
        separator: opts.separator.clone(),
        kept,
        removed,
        changes,
    }
}

/// Simplifies every tool of a list.
pub fn simplify_all(tools: &[Tool], opts: &SimplifyOptions) -> Vec<Simplified> {
    tools.iter().map(|t| simplify(t, opts)).collect()
}

impl Simplified {
    /// Brings arguments written against the simplified schema back to the
    /// original's shape (dotted keys nested again). Keys that are not
    /// flattened keys pass through unchanged.
    pub fn restore(&self, args: &Value) -> Value {
        let Value::Object(flat) = args else {
            return args.clone();
        };
        let sep = self.separator.as_str();
        let mut out = Map::new();
        for (k, v) in flat {
            // The longest flattened object whose key prefixes `k`.
            let parent = if self.kept.contains(k) {
                None
            } else {
                self.flattened
                    .iter()
                    .filter(|p| {
                        let pre = p.join(sep);
                        k.len() > pre.len() + sep.len()
                            && k.starts_with(&pre)
                            && k[pre.len()..].starts_with(sep)
                    })
                    .max_by_key(|p| p.len())
            };
            match parent {
                Some(p) => {
                    let leaf = &k[p.join(sep).len() + sep.len()..];
                    insert_at(&mut out, p, leaf, v.clone());
                }
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Value::Object(out)
    }

    /// The inverse of [`Simplified::restore`]: original-shaped arguments
    /// as the simplified schema names them.
    pub fn flatten_args(&self, args: &Value) -> Value {
        let Value::Object(o) = args else {
            return args.clone();
        };
        let mut out = Map::new();
        self.flatten_into(o, &mut Vec::new(), &mut out);
        Value::Object(out)
    }

    fn flatten_into(
        &self,
        o: &Map<String, Value>,
        path: &mut Vec<String>,
        out: &mut Map<String, Value>,
    ) {
        for (k, v) in o {
            path.push(k.clone());
            match v {
                Value::Object(inner) if self.flattened.iter().any(|p| p == path) => {
                    self.flatten_into(inner, path, out);
                }
                _ => {
                    out.insert(path.join(&self.separator), v.clone());
                }
            }
            path.pop();
        }
    }
}

fn insert_at(map: &mut Map<String, Value>, path: &[String], leaf: &str, v: Value) {
    match path.split_first() {
        None => {
            map.insert(leaf.to_owned(), v);
        }
        Some((first, rest)) => {
            let slot = map
                .entry(first.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            if let Value::Object(next) = slot {
                insert_at(next, rest, leaf, v);
            }
        }
    }
}

fn required_of(o: &Map<String, Value>) -> Vec<String> {
    o.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn remove_optional(s: &mut Value, path: &str, removed: &mut Vec<String>) {
    let Value::Object(o) = s else { return };
    let required = required_of(o);
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        props.retain(|k, _| {
            let keep = required.contains(k);
            if !keep {
                removed.push(format!("{path}.{k}"));
            }
            keep
        });
        for (k, p) in props.iter_mut() {
            remove_optional(p, &format!("{path}.{k}"), removed);
        }
    }
}

fn is_plain_object(p: &Value) -> bool {
    p.get("type").and_then(Value::as_str) == Some("object")
        && p.get("properties")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
        && !["anyOf", "oneOf", "allOf", "patternProperties"]
            .iter()
            .any(|k| p.get(*k).is_some())
}

/// Flattens the nested objects of an object schema in place.
fn flatten_schema(s: &mut Value, sep: &str, flattened: &mut Vec<Vec<String>>) {
    let Value::Object(o) = s else { return };
    let Some(Value::Object(props)) = o.get("properties") else {
        return;
    };
    let required = required_of(o);
    let mut new_props = Map::new();
    let mut new_required = Vec::new();
    let mut path = Vec::new();
    let mut taken: Vec<String> = props.keys().cloned().collect();
    for (k, p) in props {
        let req = required.contains(k);
        collect(
            k,
            p,
            req,
            sep,
            &mut path,
            &mut new_props,
            &mut new_required,
            flattened,
            &mut taken,
        );
    }
    o.insert("properties".into(), Value::Object(new_props));
    if o.contains_key("required") || !new_required.is_empty() {
        o.insert(
            "required".into(),
            Value::Array(new_required.into_iter().map(Value::String).collect()),
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn collect(
    key: &str,
    p: &Value,
    required: bool,
    sep: &str,
    path: &mut Vec<String>,
    props: &mut Map<String, Value>,
    req_out: &mut Vec<String>,
    flattened: &mut Vec<Vec<String>>,
    taken: &mut Vec<String>,
) {
    path.push(key.to_owned());
    let flat_key = path.join(sep);
    let inner_req = p.as_object().map(required_of).unwrap_or_default();
    let children: Vec<(String, Value)> = p
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(a, b)| (a.clone(), b.clone())).collect())
        .unwrap_or_default();
    // A key holding the separator is never a flattened prefix: `a.b` with a
    // child `path` and `a` with a child `b.path`… could not be told apart
    // (nested keys holding it are refused below, at their parent).
    let flattenable = is_plain_object(p)
        && !key.contains(sep)
        && !inner_req.is_empty()
        && children
            .iter()
            .all(|(c, _)| !c.contains(sep) && !c.is_empty())
        && !children
            .iter()
            .any(|(c, _)| taken.contains(&format!("{flat_key}{sep}{c}")));
    if flattenable {
        flattened.push(path.clone());
        for (c, _) in &children {
            taken.push(format!("{flat_key}{sep}{c}"));
        }
        for (c, cp) in &children {
            let creq = required && inner_req.contains(c);
            collect(c, cp, creq, sep, path, props, req_out, flattened, taken);
        }
    } else {
        props.insert(flat_key.clone(), p.clone());
        if required {
            req_out.push(flat_key);
        }
    }
    path.pop();
}

fn tidy(s: &mut Value, opts: &SimplifyOptions, path: &str, changes: &mut Vec<SchemaLoss>) {
    match s {
        Value::Object(o) => {
            if opts.drop_additional_properties && o.remove("additionalProperties").is_some() {
                changes.push(SchemaLoss {
                    path: format!("{path}.additionalProperties"),
                    reason: "dropped".into(),
                });
            }
            if opts.enums_to_description {
                if let Some(Value::Array(vals)) = o.remove("enum") {
                    let list: Vec<String> = vals
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect();
                    let note = format!("(options: {})", list.join(", "));
                    let d = match o.get("description").and_then(Value::as_str) {
                        Some(d) if !d.is_empty() => {
                            let d = match opts.max_description {
                                Some(m) => shorten(d, m.saturating_sub(note.len() + 1).max(20)),
                                None => d.to_owned(),
                            };
                            format!("{d} {note}")
                        }
                        _ => note,
                    };
                    o.insert("description".into(), Value::String(d));
                    changes.push(SchemaLoss {
                        path: format!("{path}.enum"),
                        reason: "moved into the description (still enforced against the original)"
                            .into(),
                    });
                } else {
                    cap_description(o, opts, path, changes);
                }
            } else {
                cap_description(o, opts, path, changes);
            }
            for (k, v) in o.iter_mut() {
                if matches!(k.as_str(), "properties" | "$defs" | "definitions") {
                    if let Value::Object(m) = v {
                        for (n, x) in m.iter_mut() {
                            tidy(x, opts, &format!("{path}.{k}.{n}"), changes);
                        }
                    }
                } else if matches!(
                    k.as_str(),
                    "items" | "anyOf" | "oneOf" | "allOf" | "prefixItems"
                ) {
                    tidy(v, opts, &format!("{path}.{k}"), changes);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                tidy(x, opts, &format!("{path}.{i}"), changes);
            }
        }
        _ => {}
    }
}

fn cap_description(
    o: &mut Map<String, Value>,
    opts: &SimplifyOptions,
    path: &str,
    changes: &mut Vec<SchemaLoss>,
) {
    if let (Some(max), Some(Value::String(d))) = (opts.max_description, o.get_mut("description")) {
        if d.chars().count() > max {
            *d = shorten(d, max);
            changes.push(SchemaLoss {
                path: format!("{path}.description"),
                reason: format!("cut to {max} characters"),
            });
        }
    }
}

/// Cuts `text` to at most `max` characters: at the end of its first
/// sentence if that fits, else at a word boundary with `…`.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    // First sentence, if it fits.
    if let Some(end) = text.find(". ").or_else(|| text.find(".\n")) {
        if text[..=end].chars().count() <= max && end >= 8 {
            return text[..end].to_owned();
        }
    }
    let budget = max.saturating_sub(1);
    let cut: String = text.chars().take(budget).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(p) if p * 2 > cut.len() => cut[..p].trim_end().to_owned(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash() -> Tool {
        Tool::new(
            "Bash",
            "Executes a given bash command in a persistent shell session with optional timeout, ensuring proper handling and security measures.",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The command to execute"},
                "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
                "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words."},
                "run_in_background": {"type": "boolean"}
            }, "required": ["command"], "additionalProperties": false}),
        )
    }

    #[test]
    fn seed_defaults() {
        let s = simplify(&bash(), &SimplifyOptions::default());
        assert!(s.tool.parameters.get("additionalProperties").is_none());
        assert_eq!(
            s.tool.parameters["properties"].as_object().unwrap().len(),
            4
        );
        assert!(s.tool.description().chars().count() <= 100);
    }

    #[test]
    fn registry_picks_the_profile_for_real_ids() {
        let r = super::super::registry::Registry::builtin();
        for (id, want) in [
            // 003's two models, as Ollama, Hugging Face, LM Studio and OpenRouter name them.
            ("qwen3-coder-30b", "qwen3-coder-30b"),
            ("ollama/qwen3-coder:30b-a3b-q4_K_M", "qwen3-coder-30b"),
            (
                "hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M",
                "qwen3-coder-30b",
            ),
            (
                "lmstudio-community/Qwen3-Coder-30B-A3B-Instruct-MLX-4bit",
                "qwen3-coder-30b",
            ),
            (
                "openrouter/qwen/qwen3-coder-30b-a3b-instruct",
                "qwen3-coder-30b",
            ),
            ("openai/gpt-oss-20b", "gpt-oss-20b"),
            ("gpt-oss:20b", "gpt-oss-20b"),
            ("groq/openai/gpt-oss-20b", "gpt-oss-20b"),
            ("gpt-oss-120b", "large"),
            // The two measured models and their sub-0.5 B siblings.
            ("SmolLM2-135M-Instruct", "smollm2-135m"),
            ("SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m"),
            ("HuggingFaceTB/SmolLM2-360M-Instruct", "smollm2-135m"),
            ("smollm2:1.7b", "small"),
            ("gemma-3-270m-it", "gemma-3-270m"),
            ("ggml-org/gemma-3-270m-it-GGUF", "gemma-3-270m"),
            ("gemma-3-270m-q4_k_m.gguf", "gemma-3-270m"),
            ("gemma3:1b", "small"),
            // By size class.
            ("llama3.2:3b", "small"),
            ("qwen2.5:0.5b-instruct", "small"),
            ("gemma3:27b", "medium"),
            ("mistralai/Mistral-Small-24B-Instruct-2501", "medium"),
            ("meta-llama/Llama-3.3-70B-Instruct", "large"),
            ("claude-sonnet-4-20250514", "large"),
            ("gpt-4o", "large"),
        ] {
            let m = r.lookup(id);
            assert_eq!(Profile::for_model(&m).name, want, "{id}: {m:?}");
        }
    }

    #[test]
    fn every_name_and_alias_reads() {
        for n in Profile::NAMES {
            assert_eq!(Profile::named(n).unwrap().name, n);
        }
        for (alias, n) in [
            ("qwen3-coder", "qwen3-coder-30b"),
            ("GPT-OSS", "gpt-oss-20b"),
            ("smollm2", "smollm2-135m"),
            ("gemma3-270m", "gemma-3-270m"),
            ("claude", "none"),
        ] {
            assert_eq!(Profile::named(alias).unwrap().name, n);
        }
        // 003's two profiles, exactly.
        let q = Profile::named("qwen3-coder-30b").unwrap().options;
        let g = Profile::named("gpt-oss-20b").unwrap().options;
        for (o, remove, cap) in [(&q, false, 80), (&g, true, 50)] {
            assert_eq!(o.remove_optional, remove);
            assert!(o.flatten_nested && o.enums_to_description && o.drop_additional_properties);
            assert_eq!(o.max_description, Some(cap));
        }
    }

    #[test]
    fn gpt_oss_profile_removes_optional() {
        let p = Profile::named("gpt-oss-20b").unwrap();
        let s = simplify(&bash(), &p.options);
        assert_eq!(
            s.tool.parameters["properties"].as_object().unwrap().len(),
            1
        );
        assert_eq!(s.removed.len(), 3);
        assert!(s.tool.description().chars().count() <= 50);
    }

    #[test]
    fn optional_objects_without_required_children_stay_nested() {
        let t = Tool::new(
            "f",
            "",
            json!({"type": "object", "properties": {
                "o": {"type": "object", "properties": {"a": {"type": "string"}}}
            }}),
        );
        let s = simplify(&t, &SimplifyOptions::default());
        assert!(s.flattened.is_empty());
        let args = json!({"o": {}});
        assert_eq!(s.restore(&s.flatten_args(&args)), args);
    }

    #[test]
    fn refs_are_inlined_and_flattened() {
        let t = Tool::new(
            "f",
            "",
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
                   "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}),
        );
        let s = simplify(&t, &SimplifyOptions::default());
        assert_eq!(s.tool.parameters["properties"]["p.x"]["type"], "integer");
        assert_eq!(s.restore(&json!({"p.x": 1})), json!({"p": {"x": 1}}));
    }

    #[test]
    fn shortening() {
        assert_eq!(
            shorten("Reads a file. Then more text follows here.", 20),
            "Reads a file"
        );
        let s = shorten("word ".repeat(40).as_str(), 30);
        assert!(s.chars().count() <= 30 && s.ends_with('…'));
    }
}
