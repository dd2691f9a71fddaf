//! Validation with the `jsonschema` crate: each tool's schema is compiled
//! once, when the [`super::Catalog`] is built; each error becomes a typed
//! [`CallError`] with a JSON pointer.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::Validator;
use serde_json::{Map, Value};

use super::error::{pointer_push, short, CallError, ErrorKind};

/// Longest received value quoted in an error.
const QUOTE: usize = 60;

/// Rewrites the type names of BFCL- and Python-style schemas (`dict`,
/// `float`, `tuple`, `any`) and upper-case OpenAPI/Gemini ones (`STRING`)
/// to JSON Schema's, and drops a non-list `required` (draft 3), so that
/// such schemas compile. Values under `enum`, `const`, `default` and
/// `examples` are data and left alone.
pub(crate) fn sanitize(schema: &mut Value) {
    fn ty(t: &str) -> Option<&'static str> {
        Some(match t.to_ascii_lowercase().as_str() {
            "object" | "dict" | "map" => "object",
            "array" | "list" | "tuple" | "set" => "array",
            "string" | "str" | "char" | "text" => "string",
            "integer" | "int" | "long" => "integer",
            "number" | "float" | "double" | "decimal" => "number",
            "boolean" | "bool" => "boolean",
            "null" | "none" => "null",
            _ => return None,
        })
    }
    fn walk(v: &mut Value, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Object(m) => {
                let mut drop_type = false;
                match m.get_mut("type") {
                    Some(Value::String(t)) => match ty(t) {
                        Some(n) => {
                            if t != n {
                                *t = n.to_owned();
                            }
                        }
                        None => drop_type = true,
                    },
                    Some(Value::Array(ts)) => {
                        let fixed: Vec<Value> = ts
                            .iter()
                            .filter_map(|t| t.as_str().and_then(ty))
                            .map(|t| Value::String(t.into()))
                            .collect();
                        *ts = fixed;
                    }
                    _ => {}
                }
                if drop_type {
                    m.remove("type");
                }
                if m.get("required").is_some_and(|r| !r.is_array()) {
                    m.remove("required");
                }
                for (k, x) in m.iter_mut() {
                    if !matches!(
                        k.as_str(),
                        "enum" | "const" | "default" | "examples" | "example"
                    ) {
                        walk(x, depth + 1);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, depth + 1)),
            _ => {}
        }
    }
    walk(schema, 0);
}

/// Compiles one tool's schema (formats are checked too).
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

fn type_name(t: &TypeKind) -> String {
    match t {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(ts) => ts
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn received_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The declared type of the property at `path` in `schema`, for the
/// suggestion of a missing parameter.
fn describe(schema: Option<&Value>) -> Option<String> {
    let s = schema?.as_object()?;
    if let Some(Value::Array(e)) = s.get("enum") {
        return Some(format!(
            "one of {}",
            e.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match s.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
        ),
        _ => None,
    }
}

/// The error for required parameter `name` missing from the object at
/// `path` (`schema`: its declared schema, when known).
pub(crate) fn missing(path: &str, name: &str, schema: Option<&Value>) -> CallError {
    let expected = describe(schema);
    let mut c = CallError::new(
        ErrorKind::MissingRequired,
        pointer_push(path, name),
        format!("missing required parameter `{name}`"),
    );
    c.suggestion = Some(match &expected {
        Some(t) => format!("add `{name}` ({t})"),
        None => format!("add `{name}`"),
    });
    c.expected = expected;
    c
}

/// The errors of `args` against `validator`, at most `max`. `props` are the
/// tool's declared top-level properties (to describe a missing one).
pub(crate) fn errors(
    validator: &Validator,
    args: &Value,
    props: Option<&Map<String, Value>>,
    max: usize,
) -> Vec<CallError> {
    let mut out = Vec::new();
    for e in validator.iter_errors(args) {
        if out.len() >= max {
            break;
        }
        let path = e.instance_path().as_str().to_owned();
        let at = args.pointer(&path);
        // Quoted only by the kinds that say what was received.
        let received = || at.map(|v| short(v, QUOTE));
        let mut err = match e.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let schema = if path.is_empty() {
                    props.and_then(|m| m.get(name))
                } else {
                    None
                };
                missing(&path, name, schema)
            }
            ValidationErrorKind::Type { kind } => {
                let want = type_name(kind);
                let got = at.map(received_type).unwrap_or("nothing");
                let mut c = CallError::new(
                    ErrorKind::TypeMismatch,
                    path.clone(),
                    format!("expected {want}, got {got}"),
                );
                c.suggestion = Some(format!("give a {want} value"));
                c.expected = Some(want);
                c.received = received();
                c
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let names = unexpected.join("`, `");
                let mut c = CallError::new(
                    ErrorKind::UnknownParameter,
                    pointer_push(&path, unexpected.first().map_or("", String::as_str)),
                    format!("unknown parameter `{names}`"),
                );
                let declared: Vec<&str> = props
                    .map(|m| m.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                if path.is_empty() && !declared.is_empty() {
                    c.suggestion = Some(format!(
                        "remove it; parameters are: {}",
                        declared.join(", ")
                    ));
                } else {
                    c.suggestion = Some("remove it".into());
                }
                c
            }
            ValidationErrorKind::AnyOf { .. }
            | ValidationErrorKind::OneOfNotValid { .. }
            | ValidationErrorKind::OneOfMultipleValid { .. } => {
                let mut c = CallError::new(
                    ErrorKind::TypeMismatch,
                    path.clone(),
                    "matches none of the allowed forms",
                );
                c.received = received();
                c
            }
            ValidationErrorKind::Enum { options } => {
                let list = match &**options {
                    Value::Array(a) => a
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.to_string(),
                };
                let mut c =
                    CallError::new(ErrorKind::InvalidValue, path.clone(), "value not allowed");
                c.suggestion = Some(format!("use one of: {list}"));
                c.expected = Some(format!("one of {list}"));
                c.received = received();
                c
            }
            other => {
                let mut c = CallError::new(ErrorKind::InvalidValue, path.clone(), e.to_string());
                if let ValidationErrorKind::Constant { expected_value } = other {
                    c.expected = Some(expected_value.to_string());
                }
                c.received = received();
                c
            }
        };
        if err.message.len() > 200 {
            err.message = short(&Value::String(err.message.clone()), 200);
        }
        out.push(err);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bfcl_types_compile_after_sanitizing() {
        let mut s = json!({"type": "dict", "properties": {
            "x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "String"}},
            "a": {"type": "any"}, "e": {"type": "string", "enum": [{"type": "dict"}]}},
            "required": ["x"]});
        sanitize(&mut s);
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["x"]["type"], "number");
        assert_eq!(s["properties"]["t"]["type"], "array");
        assert_eq!(s["properties"]["t"]["items"]["type"], "string");
        assert!(s["properties"]["a"].get("type").is_none());
        assert_eq!(s["properties"]["e"]["enum"][0]["type"], "dict");
        assert!(compile(&s).is_ok());
    }

    #[test]
    fn errors_are_typed_with_pointers() {
        let s = json!({"type": "object", "properties": {
            "city": {"type": "string"}, "n": {"type": "integer", "minimum": 1},
            "unit": {"enum": ["c", "f"]}}, "required": ["city"], "additionalProperties": false});
        let v = compile(&s).unwrap();
        let props = s["properties"].as_object();
        let errs = errors(&v, &json!({"n": "x", "unit": "k", "zzz": 1}), props, 16);
        let kinds: Vec<(ErrorKind, &str)> =
            errs.iter().map(|e| (e.kind, e.path.as_str())).collect();
        for want in [
            (ErrorKind::MissingRequired, "/city"),
            (ErrorKind::TypeMismatch, "/n"),
            (ErrorKind::InvalidValue, "/unit"),
            (ErrorKind::UnknownParameter, "/zzz"),
        ] {
            assert!(kinds.contains(&want), "{want:?} not in {kinds:?}");
        }
        let range = errors(&v, &json!({"city": "a", "n": 0}), props, 16);
        assert_eq!(range.len(), 1);
        assert_eq!(
            (range[0].kind, range[0].path.as_str()),
            (ErrorKind::InvalidValue, "/n")
        );
        assert_eq!(errors(&v, &json!({"city": "a"}), props, 16), vec![]);
        assert_eq!(
            errors(&v, &json!({"n": "x", "unit": "k", "zzz": 1}), props, 2).len(),
            2
        );
    }
}
