//! Provider schema adapters, each with an inverse for call arguments;
//! `tool_choice` per provider; tool results per provider.
//!
//! | adapter | schema rewrite | inverse for arguments |
//! |---|---|---|
//! | [`Provider::OpenAiStrict`] | every property required, optional ones nullable, `additionalProperties: false` everywhere, keywords strict mode rejects removed (and named in the description) | `null` for an optional parameter (whose original schema does not accept `null`) removed |
//! | [`Provider::Gemini`] | OpenAPI 3.0 subset: `$ref` inlined, type lists → `type` + `nullable`, `const` → `enum`, enums as strings, unsupported keywords removed, upper-case types | enum strings back to the original enum values, whole floats back to integers |
//! | [`Provider::Anthropic`] | `type: object` and `properties` at the root | identity |
//! | [`Provider::Ollama`] | descriptions capped ([`AdaptOptions::ollama_description_cap`]) | identity |
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::adapt::Provider;
//! let schema = json!({"type": "object", "properties": {
//!     "path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}
//! }, "required": ["path"]});
//! let strict = Provider::OpenAiStrict.adapt_schema(&schema);
//! assert_eq!(strict.schema["required"], json!(["path", "limit"]));
//! assert_eq!(strict.schema["properties"]["limit"]["type"], json!(["integer", "null"]));
//! // The model must send `limit`; a `null` goes away again.
//! let args = json!({"path": "a.txt", "limit": null});
//! assert_eq!(Provider::OpenAiStrict.restore_args(&schema, &args), json!({"path": "a.txt"}));
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::{json, Map, Value};

/// A provider whose tool schemas have their own rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI with `strict: true` (Chat Completions and Responses).
    OpenAiStrict,
    /// Gemini `functionDeclarations` (OpenAPI 3.0 schema subset).
    Gemini,
    /// Anthropic `input_schema`.
    Anthropic,
    /// Ollama (OpenAI's shape; long descriptions are cut by its templates).
    Ollama,
}

impl Provider {
    /// All adapters.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiStrict,
        Provider::Gemini,
        Provider::Anthropic,
        Provider::Ollama,
    ];

    /// `openai-strict`, `gemini`, `anthropic`, `ollama`.
    pub const fn name(self) -> &'static str {
        match self {
            Provider::OpenAiStrict => "openai-strict",
            Provider::Gemini => "gemini",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
        }
    }

    /// Reads an adapter name (`openai` is read as `openai-strict`).
    pub fn from_name(s: &str) -> Option<Provider> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai-strict" | "openai_strict" | "strict" | "openai" => Some(Provider::OpenAiStrict),
            "gemini" | "google" | "vertex" => Some(Provider::Gemini),
            "anthropic" | "claude" => Some(Provider::Anthropic),
            "ollama" => Some(Provider::Ollama),
            _ => None,
        }
    }

    /// Rewrites `schema` for this provider with the default options.
    pub fn adapt_schema(self, schema: &Value) -> Adapted {
        self.adapt_schema_with(schema, &AdaptOptions::default())
    }

    /// Rewrites `schema` for this provider.
    pub fn adapt_schema_with(self, schema: &Value, opts: &AdaptOptions) -> Adapted {
        let mut losses = Vec::new();
        let schema = match self {
            Provider::OpenAiStrict => {
                let mut s = schema.clone();
                strict(&mut s, "", &mut losses);
                s
            }
            Provider::Gemini => {
                let inlined = inline_refs(schema, opts.max_ref_depth, &mut losses);
                gemini(&inlined, "", &mut losses)
            }
            Provider::Anthropic => {
                let mut s = schema.clone();
                if let Value::Object(o) = &mut s {
                    if o.get("type").and_then(Value::as_str) != Some("object") {
                        if o.contains_key("type") {
                            losses.push(SchemaLoss::new("", "root type set to `object`"));
                        }
                        o.insert("type".into(), "object".into());
                    }
                    o.entry("properties").or_insert_with(|| json!({}));
                }
                s
            }
            Provider::Ollama => {
                let mut s = schema.clone();
                cap_descriptions(&mut s, opts.ollama_description_cap, "", &mut losses);
                s
            }
        };
        Adapted { schema, losses }
    }

    /// Brings arguments a model produced against the adapted schema back to
    /// the shape of `original` (the schema before [`Provider::adapt_schema`]).
    pub fn restore_args(self, original: &Value, args: &Value) -> Value {
        match self {
            Provider::OpenAiStrict => {
                let mut out = args.clone();
                drop_strict_nulls(original, original, &mut out, 0);
                out
            }
            Provider::Gemini => restore_gemini(original, original, args, 0),
            Provider::Anthropic | Provider::Ollama => args.clone(),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Limits for the adapters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdaptOptions {
    /// Longest description (in characters) for Ollama; RFC-136 uses 500.
    pub ollama_description_cap: usize,
    /// How deep `$ref`s are inlined (recursive schemas stop here and become
    /// an unconstrained object).
    pub max_ref_depth: usize,
}

impl Default for AdaptOptions {
    fn default() -> Self {
        AdaptOptions {
            ollama_description_cap: 500,
            max_ref_depth: 8,
        }
    }
}

/// An adapted schema and what the adapter changed or dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct Adapted {
    /// The schema to send.
    pub schema: Value,
    /// What it could not keep.
    pub losses: Vec<SchemaLoss>,
}

/// One keyword an adapter dropped or changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SchemaLoss {
    /// Where, as a dotted path from the root (`.properties.when.format`).
    pub path: String,
    /// What happened.
    pub reason: String,
}

impl SchemaLoss {
    fn new(path: &str, reason: impl Into<String>) -> SchemaLoss {
        SchemaLoss {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}

/// Keywords OpenAI's strict mode rejects.
const STRICT_UNSUPPORTED: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "default",
    "examples",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "$schema",
    "$id",
];

fn strict(s: &mut Value, path: &str, losses: &mut Vec<SchemaLoss>) {
    let Value::Object(o) = s else { return };
    let mut dropped = Vec::new();
    for k in STRICT_UNSUPPORTED {
        if let Some(v) = o.remove(*k) {
            losses.push(SchemaLoss::new(
                &format!("{path}.{k}"),
                "strict mode rejects it; named in the description",
            ));
            dropped.push(format!("{k}: {}", compact_json(&v)));
        }
    }
    if !dropped.is_empty() {
        let note = format!("({})", dropped.join(", "));
        let d = match o.get("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} {note}"),
            _ => note,
        };
        o.insert("description".into(), Value::String(d));
    }
    // allOf with one member: merge it (strict mode rejects allOf).
    if let Some(Value::Array(all)) = o.remove("allOf") {
        losses.push(SchemaLoss::new(
            &format!("{path}.allOf"),
            "merged into the schema",
        ));
        for a in all {
            if let Value::Object(m) = a {
                for (k, v) in m {
                    o.entry(k).or_insert(v);
                }
            }
        }
    }
    let is_object =
        o.get("type").and_then(Value::as_str) == Some("object") || o.contains_key("properties");
    if is_object {
        let required: Vec<String> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let props = o
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        let mut all = Vec::new();
        if let Some(props) = props {
            for (name, p) in props.iter_mut() {
                strict(p, &format!("{path}.properties.{name}"), losses);
                if !required.contains(name) {
                    make_nullable(p);
                }
                all.push(Value::String(name.clone()));
            }
        }
        o.insert("required".into(), Value::Array(all));
        if o.get("additionalProperties") != Some(&Value::Bool(false)) {
            if o.get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(true))
            {
                losses.push(SchemaLoss::new(
                    &format!("{path}.additionalProperties"),
                    "strict mode needs `false`; the schema for extra keys is gone",
                ));
            }
            o.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    for key in ["items", "additionalItems"] {
        if let Some(i) = o.get_mut(key) {
            strict(i, &format!("{path}.{key}"), losses);
        }
    }
    for key in ["anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(a)) = o.get_mut(key) {
            for (i, x) in a.iter_mut().enumerate() {
                strict(x, &format!("{path}.{key}.{i}"), losses);
            }
        }
    }
    if let Some(Value::Array(a)) = o.remove("oneOf") {
        losses.push(SchemaLoss::new(
            &format!("{path}.oneOf"),
            "written as anyOf",
        ));
        o.insert("anyOf".into(), Value::Array(a));
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = o.get_mut(key) {
            for (name, x) in d.iter_mut() {
                strict(x, &format!("{path}.{key}.{name}"), losses);
            }
        }
    }
}

fn make_nullable(p: &mut Value) {
    if accepts_null(p) {
        return;
    }
    let Value::Object(o) = p else { return };
    match o.get_mut("type") {
        Some(Value::String(t)) => {
            let t = t.clone();
            o.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(e)) = o.get_mut("enum") {
                e.push(Value::Null);
            }
        }
        Some(Value::Array(ts)) => ts.push("null".into()),
        _ => {
            let inner = std::mem::take(o);
            o.insert(
                "anyOf".into(),
                json!([Value::Object(inner), {"type": "null"}]),
            );
        }
    }
}

fn accepts_null(p: &Value) -> bool {
    match p.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => p
            .get("anyOf")
            .or_else(|| p.get("oneOf"))
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(accepts_null)),
    }
}

fn compact_json(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        _ => v.to_string(),
    }
}

/// Resolves a local `$ref` (`#/$defs/x`, `#/definitions/x`).
fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let p = r.strip_prefix('#')?;
    if p.is_empty() {
        return Some(root);
    }
    root.pointer(p)
}

fn schema_at<'a>(root: &'a Value, s: &'a Value, depth: usize) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) if depth < 32 => resolve(root, r).map_or(s, |t| schema_at(root, t, depth + 1)),
        _ => s,
    }
}

/// Inlines every local `$ref` of `schema` (and drops `$defs` /
/// `definitions`). A reference deeper than `max_depth` (a recursive schema)
/// becomes `{"type": "object"}` and is reported.
pub fn inline_refs(schema: &Value, max_depth: usize, losses: &mut Vec<SchemaLoss>) -> Value {
    fn go(
        root: &Value,
        s: &Value,
        depth: usize,
        max: usize,
        path: &str,
        l: &mut Vec<SchemaLoss>,
    ) -> Value {
        match s {
            Value::Object(o) => {
                if let Some(r) = o.get("$ref").and_then(Value::as_str) {
                    if depth >= max {
                        l.push(SchemaLoss::new(
                            path,
                            format!("`$ref` {r} nested deeper than {max}: any object"),
                        ));
                        return json!({"type": "object"});
                    }
                    let Some(target) = resolve(root, r) else {
                        l.push(SchemaLoss::new(
                            path,
                            format!("`$ref` {r} does not resolve: any value"),
                        ));
                        return json!({});
                    };
                    let mut t = go(root, target, depth + 1, max, path, l);
                    // Siblings of `$ref` (a description) win over the target's.
                    if let Value::Object(t) = &mut t {
                        for (k, v) in o {
                            if k != "$ref" {
                                t.insert(k.clone(), go(root, v, depth, max, path, l));
                            }
                        }
                    }
                    return t;
                }
                let mut out = Map::new();
                for (k, v) in o {
                    if k == "$defs" || k == "definitions" {
                        continue;
                    }
                    let child = if matches!(
                        k.as_str(),
                        "enum" | "const" | "default" | "examples" | "required"
                    ) {
                        v.clone()
                    } else {
                        go(root, v, depth, max, &format!("{path}.{k}"), l)
                    };
                    out.insert(k.clone(), child);
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| go(root, x, depth, max, &format!("{path}.{i}"), l))
                    .collect(),
            ),
            _ => s.clone(),
        }
    }
    go(schema, schema, 0, max_depth, "", losses)
}

/// Keywords Gemini's schema subset keeps.
const GEMINI_KEEP: &[&str] = &[
    "format",
    "title",
    "description",
    "nullable",
    "maxItems",
    "minItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

fn gemini(s: &Value, path: &str, losses: &mut Vec<SchemaLoss>) -> Value {
    let Value::Object(o) = s else {
        return s.clone();
    };
    let mut out = Map::new();
    // Type: a string, or a list with `null` → type + nullable.
    let mut types: Vec<String> = match o.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    if types.iter().any(|t| t == "null") {
        types.retain(|t| t != "null");
        out.insert("nullable".into(), Value::Bool(true));
    }
    let mut any_of: Vec<Value> = Vec::new();
    match types.len() {
        0 => {}
        1 => {
            out.insert("type".into(), Value::String(types[0].to_ascii_uppercase()));
        }
        _ => {
            losses.push(SchemaLoss::new(
                &format!("{path}.type"),
                "a type list written as anyOf",
            ));
            any_of = types
                .iter()
                .map(|t| json!({"type": t.to_ascii_uppercase()}))
                .collect();
        }
    }
    // Enums (and const) as strings.
    let en = o
        .get("enum")
        .cloned()
        .or_else(|| o.get("const").map(|c| json!([c])));
    if o.contains_key("const") {
        losses.push(SchemaLoss::new(
            &format!("{path}.const"),
            "written as a one-value enum",
        ));
    }
    if let Some(Value::Array(vals)) = en {
        let mut strs = Vec::new();
        let mut changed = false;
        for v in vals {
            match v {
                Value::String(s) => strs.push(Value::String(s)),
                Value::Null => {
                    out.insert("nullable".into(), Value::Bool(true));
                }
                other => {
                    changed = true;
                    strs.push(Value::String(other.to_string()));
                }
            }
        }
        if changed {
            losses.push(SchemaLoss::new(
                &format!("{path}.enum"),
                "non-string enum values written as strings (restored in the arguments)",
            ));
            out.insert("type".into(), "STRING".into());
            if out.contains_key("format") {
                out.remove("format");
            }
        }
        out.insert("enum".into(), Value::Array(strs));
        if !out.contains_key("type") {
            out.insert("type".into(), "STRING".into());
        }
    }
    for (k, v) in o {
        match k.as_str() {
            "type" | "enum" | "const" => {}
            "properties" => {
                if let Value::Object(p) = v {
                    let props: Map<String, Value> = p
                        .iter()
                        .map(|(n, x)| {
                            (
                                n.clone(),
                                gemini(x, &format!("{path}.properties.{n}"), losses),
                            )
                        })
                        .collect();
                    out.insert("properties".into(), Value::Object(props));
                }
            }
            "required" => {
                out.insert("required".into(), v.clone());
            }
            "items" => {
                out.insert("items".into(), gemini(v, &format!("{path}.items"), losses));
            }
            "anyOf" | "oneOf" => {
                if k == "oneOf" {
                    losses.push(SchemaLoss::new(
                        &format!("{path}.oneOf"),
                        "written as anyOf",
                    ));
                }
                if let Value::Array(a) = v {
                    for (i, x) in a.iter().enumerate() {
                        if x.get("type").and_then(Value::as_str) == Some("null") {
                            out.insert("nullable".into(), Value::Bool(true));
                        } else {
                            any_of.push(gemini(x, &format!("{path}.{k}.{i}"), losses));
                        }
                    }
                }
            }
            _ if GEMINI_KEEP.contains(&k.as_str()) => {
                if k == "format"
                    && !matches!(
                        v.as_str(),
                        Some("enum" | "date-time" | "int32" | "int64" | "float" | "double")
                    )
                {
                    losses.push(SchemaLoss::new(
                        &format!("{path}.format"),
                        "format not in Gemini's subset",
                    ));
                    continue;
                }
                out.insert(k.clone(), v.clone());
            }
            _ => losses.push(SchemaLoss::new(
                &format!("{path}.{k}"),
                "not in Gemini's OpenAPI subset",
            )),
        }
    }
    if any_of.len() == 1 && !out.contains_key("type") {
        if let Some(Value::Object(one)) = any_of.pop() {
            for (k, v) in one {
                out.entry(k).or_insert(v);
            }
        }
    } else if !any_of.is_empty() {
        out.insert("anyOf".into(), Value::Array(any_of));
    }
    Value::Object(out)
}

/// Reads a Gemini (OpenAPI subset) schema back as JSON Schema: lower-case
/// types, `nullable` as a type list.
pub fn from_gemini_schema(s: &Value) -> Value {
    match s {
        Value::Object(o) => {
            let mut out = Map::new();
            let nullable = o.get("nullable") == Some(&Value::Bool(true));
            for (k, v) in o {
                match k.as_str() {
                    "nullable" => {}
                    "type" => {
                        let t = v.as_str().map(str::to_ascii_lowercase).unwrap_or_default();
                        let t = if t == "type_unspecified" {
                            String::new()
                        } else {
                            t
                        };
                        if !t.is_empty() {
                            out.insert(
                                "type".into(),
                                if nullable {
                                    json!([t, "null"])
                                } else {
                                    Value::String(t)
                                },
                            );
                        }
                    }
                    "properties" => {
                        let p = v
                            .as_object()
                            .map(|p| {
                                p.iter()
                                    .map(|(n, x)| (n.clone(), from_gemini_schema(x)))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.insert(k.clone(), Value::Object(p));
                    }
                    "items" => {
                        out.insert(k.clone(), from_gemini_schema(v));
                    }
                    "anyOf" => {
                        let a = v
                            .as_array()
                            .map(|a| a.iter().map(from_gemini_schema).collect())
                            .unwrap_or_default();
                        out.insert(k.clone(), Value::Array(a));
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        _ => s.clone(),
    }
}

fn cap_descriptions(s: &mut Value, cap: usize, path: &str, losses: &mut Vec<SchemaLoss>) {
    match s {
        Value::Object(o) => {
            if let Some(Value::String(d)) = o.get_mut("description") {
                if d.chars().count() > cap {
                    let cut: String = d.chars().take(cap.saturating_sub(1)).collect();
                    *d = format!("{}…", cut.trim_end());
                    losses.push(SchemaLoss::new(
                        &format!("{path}.description"),
                        format!("cut to {cap} characters"),
                    ));
                }
            }
            for (k, v) in o.iter_mut() {
                if k != "description" && k != "enum" && k != "const" && k != "default" {
                    cap_descriptions(v, cap, &format!("{path}.{k}"), losses);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                cap_descriptions(x, cap, &format!("{path}.{i}"), losses);
            }
        }
        _ => {}
    }
}

fn drop_strict_nulls(root: &Value, schema: &Value, args: &mut Value, depth: usize) {
    if depth > 64 {
        return;
    }
    let schema = schema_at(root, schema, 0);
    match args {
        Value::Object(a) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            a.retain(|k, v| {
                !(v.is_null()
                    && !required.contains(&k.as_str())
                    && props
                        .get(k)
                        .is_some_and(|p| !accepts_null(schema_at(root, p, 0))))
            });
            for (k, v) in a.iter_mut() {
                if let Some(p) = props.get(k) {
                    drop_strict_nulls(root, p, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(i) = schema.get("items") {
                for v in items {
                    drop_strict_nulls(root, i, v, depth + 1);
                }
            }
        }
        _ => {
            for key in ["anyOf", "oneOf"] {
                if let Some(alts) = schema.get(key).and_then(Value::as_array) {
                    for alt in alts {
                        drop_strict_nulls(root, alt, args, depth + 1);
                    }
                }
            }
        }
    }
}

fn restore_gemini(root: &Value, schema: &Value, v: &Value, depth: usize) -> Value {
    if depth > 64 {
        return v.clone();
    }
    let schema = schema_at(root, schema, 0);
    if let Value::String(s) = v {
        let en = schema
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
        if let Some(en) = en {
            if !en.contains(v) {
                if let Some(orig) = en.iter().find(|e| !e.is_string() && e.to_string() == *s) {
                    return orig.clone();
                }
            }
        }
    }
    match v {
        Value::Number(n) if n.is_f64() => {
            let wants_int = match schema.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => {
                    ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
                }
                _ => false,
            };
            match n.as_f64() {
                Some(f) if wants_int && f.fract() == 0.0 && f.abs() < 9.0e15 => json!(f as i64),
                _ => v.clone(),
            }
        }
        Value::Object(o) => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                o.iter()
                    .map(|(k, x)| {
                        let r = match props.and_then(|p| p.get(k)) {
                            Some(p) => restore_gemini(root, p, x, depth + 1),
                            None => x.clone(),
                        };
                        (k.clone(), r)
                    })
                    .collect(),
            )
        }
        Value::Array(a) => match schema.get("items") {
            Some(i) => Value::Array(
                a.iter()
                    .map(|x| restore_gemini(root, i, x, depth + 1))
                    .collect(),
            ),
            None => v.clone(),
        },
        _ => v.clone(),
    }
}

/// What the caller wants of tool use (`tool_choice`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type", content = "name")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// A call of this tool.
    Tool(String),
}

impl ToolChoice {
    /// Reads any provider's `tool_choice` (`"auto"`, `{"type":"any"}`,
    /// `{"type":"function","function":{"name":…}}`,
    /// `{"functionCallingConfig":{"mode":"ANY",…}}`, …).
    pub fn from_value(v: &Value) -> Option<ToolChoice> {
        match v {
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "auto" => Some(ToolChoice::Auto),
                "none" => Some(ToolChoice::None),
                "required" | "any" => Some(ToolChoice::Required),
                _ => Some(ToolChoice::Tool(s.clone())),
            },
            Value::Object(o) => {
                let cfg = o
                    .get("functionCallingConfig")
                    .or_else(|| o.get("function_calling_config"));
                if let Some(cfg) = cfg {
                    let names = cfg.get("allowedFunctionNames").and_then(Value::as_array);
                    return match cfg
                        .get("mode")
                        .and_then(Value::as_str)?
                        .to_ascii_uppercase()
                        .as_str()
                    {
                        "NONE" => Some(ToolChoice::None),
                        "ANY" => match names.map(Vec::as_slice) {
                            Some([one]) => one.as_str().map(|n| ToolChoice::Tool(n.to_owned())),
                            _ => Some(ToolChoice::Required),
                        },
                        _ => Some(ToolChoice::Auto),
                    };
                }
                let name = o
                    .get("name")
                    .or_else(|| o.get("function").and_then(|f| f.get("name")))
                    .and_then(Value::as_str);
                match (o.get("type").and_then(Value::as_str), name) {
                    (_, Some(n)) => Some(ToolChoice::Tool(n.to_owned())),
                    (Some("auto"), _) => Some(ToolChoice::Auto),
                    (Some("none"), _) => Some(ToolChoice::None),
                    (Some("any" | "required"), _) => Some(ToolChoice::Required),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The choice in a provider's format (RFC-136 §3).
    pub fn to_provider(&self, format: super::convert::ToolFormat) -> ChoiceOut {
        use super::convert::ToolFormat as F;
        let (value, send_tools, needs_prompt) = match (format, self) {
            (F::OpenAi | F::Mcp, ToolChoice::Tool(n)) => (
                Some(json!({"type": "function", "function": {"name": n}})),
                true,
                false,
            ),
            (F::Responses, ToolChoice::Tool(n)) => {
                (Some(json!({"type": "function", "name": n})), true, false)
            }
            (F::OpenAi | F::Responses | F::Mcp, c) => (Some(json!(c.word())), true, false),
            (F::Anthropic, ToolChoice::Auto) => (Some(json!({"type": "auto"})), true, false),
            (F::Anthropic, ToolChoice::None) => (Some(json!({"type": "none"})), true, false),
            (F::Anthropic, ToolChoice::Required) => (Some(json!({"type": "any"})), true, false),
            (F::Anthropic, ToolChoice::Tool(n)) => {
                (Some(json!({"type": "tool", "name": n})), true, false)
            }
            (F::Gemini, ToolChoice::Tool(n)) => (
                Some(
                    json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [n]}}),
                ),
                true,
                false,
            ),
            (F::Gemini, c) => (
                Some(json!({"functionCallingConfig": {"mode": match c {
                    ToolChoice::None => "NONE",
                    ToolChoice::Required => "ANY",
                    _ => "AUTO",
                }}})),
                true,
                false,
            ),
            // Ollama has no tool_choice: `none` sends no tools; `required`
            // and a named tool are asked for in the prompt.
            (F::Ollama, ToolChoice::Auto) => (None, true, false),
            (F::Ollama, ToolChoice::None) => (None, false, false),
            (F::Ollama, _) => (None, true, true),
        };
        ChoiceOut {
            value,
            send_tools,
            needs_prompt,
        }
    }

    fn word(&self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required | ToolChoice::Tool(_) => "required",
        }
    }
}

/// A `tool_choice` for one provider.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChoiceOut {
    /// The value of the request's `tool_choice` (Gemini: `toolConfig`);
    /// `None`: leave the field out.
    pub value: Option<Value>,
    /// Whether to send the tool list at all.
    pub send_tools: bool,
    /// The provider cannot force the choice: say it in the prompt
    /// ([`crate::toolkit::prompt`] renders the instruction).
    pub needs_prompt: bool,
}

/// What a tool returned.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "value")]
pub enum ResultContent {
    /// Text.
    Text(String),
    /// A JSON value.
    Json(Value),
}

impl ResultContent {
    /// The content as text (JSON written compactly).
    pub fn as_text(&self) -> String {
        match self {
            ResultContent::Text(t) => t.clone(),
            ResultContent::Json(v) => v.to_string(),
        }
    }
}

/// A tool's result, ready to be sent back to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResult {
    /// The call id the model gave (or the parser generated).
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// What it returned.
    pub content: ResultContent,
    /// The call failed; `content` says why.
    pub is_error: bool,
}

/// Where a result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultFormat {
    /// OpenAI chat: a `{"role": "tool"}` message.
    OpenAi,
    /// Anthropic: a `tool_result` block in a user message.
    Anthropic,
    /// OpenAI Responses: a `function_call_output` item.
    Responses,
    /// Gemini: a `functionResponse` part in a user turn.
    Gemini,
    /// Plain text, for chat templates without a tool role.
    Text,
}

impl ToolResult {
    /// The result as a message (or item, or text) in `format`.
    ///
    /// ```
    /// use toolstream::toolkit::adapt::{ResultContent, ResultFormat, ToolResult};
    /// let r = ToolResult { call_id: "call_1".into(), name: "get_weather".into(),
    ///     content: ResultContent::Text("18 °C".into()), is_error: false };
    /// assert_eq!(r.render(ResultFormat::OpenAi)["role"], "tool");
    /// assert_eq!(r.render(ResultFormat::Anthropic)["content"][0]["type"], "tool_result");
    /// ```
    pub fn render(&self, format: ResultFormat) -> Value {
        let text = self.content.as_text();
        match format {
            ResultFormat::OpenAi => {
                json!({"role": "tool", "tool_call_id": self.call_id, "content": text})
            }
            ResultFormat::Anthropic => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": self.call_id, "content": text});
                if self.is_error {
                    block["is_error"] = Value::Bool(true);
                }
                json!({"role": "user", "content": [block]})
            }
            ResultFormat::Responses => {
                json!({"type": "function_call_output", "call_id": self.call_id, "output": text})
            }
            ResultFormat::Gemini => {
                let response = match (&self.content, self.is_error) {
                    (_, true) => json!({"error": text}),
                    (ResultContent::Json(v @ Value::Object(_)), false) => v.clone(),
                    (ResultContent::Json(v), false) => json!({"result": v}),
                    (ResultContent::Text(t), false) => json!({"result": t}),
                };
                json!({"role": "user", "parts": [{"functionResponse": {"name": self.name, "response": response}}]})
            }
            ResultFormat::Text => Value::String(self.to_text()),
        }
    }

    /// The result as plain text for a template without a tool role.
    pub fn to_text(&self) -> String {
        if self.is_error {
            format!(
                "[Tool error from {} (call {})]\n{}",
                self.name,
                self.call_id,
                self.content.as_text()
            )
        } else {
            format!(
                "[Tool result from {} (call {})]\n{}",
                self.name,
                self.call_id,
                self.content.as_text()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolkit::convert::ToolFormat;

    fn sample() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File path"},
                "mode": {"type": "string", "enum": ["r", "w"]},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "opts": {"$ref": "#/$defs/opts"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "note": {"type": ["string", "null"]}
            },
            "required": ["path"],
            "$defs": {"opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}}
        })
    }

    #[test]
    fn strict_makes_everything_required_and_closed() {
        let a = Provider::OpenAiStrict.adapt_schema(&sample());
        let s = &a.schema;
        assert_eq!(
            s["required"],
            json!(["path", "mode", "level", "opts", "tags", "note"])
        );
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["mode"]["type"], json!(["string", "null"]));
        assert_eq!(s["properties"]["mode"]["enum"], json!(["r", "w", null]));
        assert!(s["properties"]["opts"]["anyOf"].is_array());
        assert_eq!(s["$defs"]["opts"]["additionalProperties"], false);
        assert_eq!(s["$defs"]["opts"]["required"], json!(["deep"]));
        assert!(s["properties"]["path"].get("minLength").is_none());
        assert_eq!(
            s["properties"]["path"]["description"],
            "File path (minLength: 1)"
        );
        assert_eq!(a.losses[0].path, ".properties.path.minLength");
    }

    #[test]
    fn strict_inverse_removes_nulls_of_optional_params_only() {
        let s = sample();
        let args = json!({"path": "a", "mode": null, "level": null, "opts": {"deep": null}, "tags": null, "note": null});
        let back = Provider::OpenAiStrict.restore_args(&s, &args);
        // `note` accepts null in the original schema: kept.
        assert_eq!(back, json!({"path": "a", "opts": {}, "note": null}));
    }

    #[test]
    fn gemini_subset_and_inverse() {
        let a = Provider::Gemini.adapt_schema(&sample());
        let s = &a.schema;
        assert_eq!(s["type"], "OBJECT");
        assert_eq!(
            s["properties"]["level"],
            json!({"type": "STRING", "enum": ["1", "2", "3"]})
        );
        assert_eq!(
            s["properties"]["opts"]["properties"]["deep"]["type"],
            "BOOLEAN"
        );
        assert_eq!(
            s["properties"]["note"],
            json!({"nullable": true, "type": "STRING"})
        );
        assert!(s.get("$defs").is_none());
        let args = json!({"path": "a", "level": "2", "tags": ["x"]});
        let back = Provider::Gemini.restore_args(&sample(), &args);
        assert_eq!(back, json!({"path": "a", "level": 2, "tags": ["x"]}));
        let int = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(
            Provider::Gemini.restore_args(&int, &json!({"n": 3.0})),
            json!({"n": 3})
        );
    }

    #[test]
    fn recursive_refs_stop() {
        let s = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/n"}},
            "$defs": {"n": {"type": "object", "properties": {"child": {"$ref": "#/$defs/n"}}}}});
        let mut l = Vec::new();
        let out = inline_refs(&s, 3, &mut l);
        assert!(!out.to_string().contains("$ref"));
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn ollama_caps_descriptions() {
        let s = json!({"type": "object", "description": "x".repeat(600), "properties": {}});
        let a = Provider::Ollama.adapt_schema(&s);
        assert_eq!(
            a.schema["description"].as_str().unwrap().chars().count(),
            500
        );
        assert_eq!(a.losses.len(), 1);
    }

    #[test]
    fn tool_choice_per_provider() {
        let t = ToolChoice::Tool("Read".into());
        assert_eq!(
            t.to_provider(ToolFormat::OpenAi).value,
            Some(json!({"type": "function", "function": {"name": "Read"}}))
        );
        assert_eq!(
            t.to_provider(ToolFormat::Anthropic).value,
            Some(json!({"type": "tool", "name": "Read"}))
        );
        assert_eq!(
            t.to_provider(ToolFormat::Responses).value,
            Some(json!({"type": "function", "name": "Read"}))
        );
        let g = t.to_provider(ToolFormat::Gemini).value.unwrap();
        assert_eq!(ToolChoice::from_value(&g), Some(t.clone()));
        assert!(t.to_provider(ToolFormat::Ollama).needs_prompt);
        assert!(!ToolChoice::None.to_provider(ToolFormat::Ollama).send_tools);
        for f in [
            ToolFormat::OpenAi,
            ToolFormat::Anthropic,
            ToolFormat::Responses,
            ToolFormat::Gemini,
        ] {
            for c in [
                ToolChoice::Auto,
                ToolChoice::None,
                ToolChoice::Required,
                t.clone(),
            ] {
                let v = c.to_provider(f).value.unwrap();
                assert_eq!(ToolChoice::from_value(&v), Some(c.clone()), "{f} {v}");
            }
        }
    }

    #[test]
    fn results_per_format() {
        let r = ToolResult {
            call_id: "c1".into(),
            name: "ls".into(),
            content: ResultContent::Json(json!(["a", "b"])),
            is_error: true,
        };
        assert_eq!(
            r.render(ResultFormat::Anthropic)["content"][0]["is_error"],
            true
        );
        assert_eq!(r.render(ResultFormat::Responses)["output"], "[\"a\",\"b\"]");
        assert_eq!(
            r.render(ResultFormat::Gemini)["parts"][0]["functionResponse"]["response"]["error"],
            "[\"a\",\"b\"]"
        );
        assert!(r.to_text().starts_with("[Tool error from ls (call c1)]"));
    }
}
