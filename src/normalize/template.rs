//! Copied templates: arguments that repeat the tool's schema
//! (`{"type": "object", "properties": …}`, `{"city": {"type": "string"}}`)
//! or a format example's placeholder (`"<args-json-object>"`,
//! `{"arg1": "value1"}`) instead of real values — the commonest failure of
//! the smallest models.

use serde_json::{Map, Value};

use super::error::InvalidReason;

/// JSON Schema keywords a copied schema is made of.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "description",
    "items",
    "enum",
    "additionalProperties",
    "title",
    "$schema",
    "default",
    "format",
    "minimum",
    "maximum",
    "examples",
];

const JSON_TYPES: &[&str] = &[
    "object", "string", "integer", "number", "boolean", "array", "null", "dict", "float", "int",
    "str", "bool", "list",
];

/// True for a schema fragment: an object of schema keywords only, with a
/// `type` naming a JSON type (or `properties`).
pub(crate) fn is_schema_like(v: &Value) -> bool {
    let Some(m) = v.as_object() else { return false };
    if m.is_empty() || !m.keys().all(|k| SCHEMA_KEYS.contains(&k.as_str())) {
        return false;
    }
    match m.get("type") {
        Some(Value::String(t)) => JSON_TYPES.contains(&t.to_ascii_lowercase().as_str()),
        Some(Value::Array(ts)) => ts
            .iter()
            .all(|t| t.as_str().is_some_and(|t| JSON_TYPES.contains(&t))),
        Some(_) => false,
        None => m.get("properties").is_some_and(Value::is_object),
    }
}

/// Longest text (in bytes, as written) taken for a placeholder: a longer
/// one is a real value. It bounds what the rewriter keeps of a streamed
/// string to tell.
pub(crate) const MAX_PLACEHOLDER: usize = 256;

/// True for a placeholder text from a format example: `<value>`,
/// `<args-json-object>`, `...`, `value1`, `{...}`.
pub(crate) fn is_placeholder_text(s: &str) -> bool {
    if s.len() > MAX_PLACEHOLDER {
        return false;
    }
    let t = s.trim();
    // Every placeholder form ends in one of these (most real values do not).
    if !matches!(
        t.chars().next_back(),
        Some('.' | '…' | '}' | ']' | '>' | '0'..='9')
    ) {
        return false;
    }
    if matches!(t, "..." | "…" | "{...}" | "[...]" | "<...>") {
        return true;
    }
    if let Some(inner) = t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        let inner = inner.trim();
        let wordy = !inner.is_empty()
            && inner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' ' | b'.'));
        let lower = inner.to_ascii_lowercase();
        return wordy
            && (inner.contains(['-', '_', ' '])
                || [
                    "value",
                    "string",
                    "number",
                    "arg",
                    "args",
                    "param",
                    "params",
                    "arguments",
                    "json",
                    "object",
                    "name",
                    "text",
                    "input",
                ]
                .contains(&lower.as_str()));
    }
    // `value1`, `Arg2`: a stem (any case) and digits; compared without a
    // lower-case copy.
    let stem = t.trim_end_matches(|c: char| c.is_ascii_digit());
    stem.len() < t.len()
        && ["value", "val", "arg", "param", "parameter", "example"]
            .iter()
            .any(|w| w.eq_ignore_ascii_case(stem))
}

/// True for a key from a format example: `arg1`, `param2`, `key1`, `parameter_name`.
fn is_placeholder_key(k: &str) -> bool {
    let lower = k.to_ascii_lowercase();
    let stem = lower
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches('_');
    (stem.len() < lower.len() && matches!(stem, "arg" | "param" | "parameter" | "key" | "argument"))
        || matches!(
            lower.as_str(),
            "parameter_name" | "param_name" | "arg_name" | "argument_name" | "<param>" | "<arg>"
        )
}

/// Whether `args` (before any fix) is a copied template, given the tool's
/// declared `props` (a declared `type` or `properties` parameter is taken
/// at its word).
pub(crate) fn detect(args: &Value, props: Option<&Map<String, Value>>) -> Option<InvalidReason> {
    let declared = |k: &str| props.is_some_and(|p| p.contains_key(k));
    match args {
        Value::String(s) => is_placeholder_text(s).then_some(InvalidReason::Placeholder),
        Value::Object(m) if !m.is_empty() => {
            if is_schema_like(args) && !m.keys().any(|k| declared(k)) {
                return Some(InvalidReason::SchemaCopy);
            }
            // Every value a schema of its parameter: `{"city": {"type": "string"}}`.
            let param_is_object = |k: &str| {
                props
                    .and_then(|p| p.get(k))
                    .and_then(|s| s.get("type"))
                    .is_some_and(|t| {
                        t == "object"
                            || t.as_array()
                                .is_some_and(|a| a.iter().any(|t| t == "object"))
                    })
            };
            if m.iter()
                .all(|(k, v)| is_schema_like(v) && !param_is_object(k))
            {
                return Some(InvalidReason::SchemaCopy);
            }
            let placeholder_value = |v: &Value| v.as_str().is_some_and(is_placeholder_text);
            if m.values().all(placeholder_value)
                || m.iter().all(|(k, v)| {
                    is_placeholder_key(k) && !declared(k) && (placeholder_value(v) || v.is_string())
                })
            {
                return Some(InvalidReason::Placeholder);
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props() -> Map<String, Value> {
        json!({"city": {"type": "string"}, "unit": {"type": "string"}})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn schema_copies() {
        for v in [
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            json!({"type": "string"}),
            json!({"city": {"type": "string", "description": "The city"}}),
            json!({"properties": {"city": {}}, "required": ["city"]}),
        ] {
            assert_eq!(
                detect(&v, Some(&props())),
                Some(InvalidReason::SchemaCopy),
                "{v}"
            );
        }
    }

    #[test]
    fn placeholders() {
        for v in [
            json!("<args-json-object>"),
            json!({"arg1": "value1", "arg2": "value2"}),
            json!({"city": "<city-name>"}),
            json!({"city": "..."}),
        ] {
            assert_eq!(
                detect(&v, Some(&props())),
                Some(InvalidReason::Placeholder),
                "{v}"
            );
        }
    }

    #[test]
    fn real_values_are_no_template() {
        for v in [
            json!({"city": "Paris"}),
            json!({"city": "<br>"}),
            json!({"city": "value"}),
            json!({}),
            json!({"type": "file", "path": "a"}),
        ] {
            assert_eq!(detect(&v, Some(&props())), None, "{v}");
        }
        // A tool that declares `type` means it.
        let p = json!({"type": {"type": "string"}})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(detect(&json!({"type": "string"}), Some(&p)), None);
        // An object parameter whose value happens to look like a schema.
        let p = json!({"schema": {"type": "object"}})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            detect(&json!({"schema": {"type": "string"}}), Some(&p)),
            None
        );
    }
}
