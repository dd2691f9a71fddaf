//! Structural fixes: arguments given as a JSON string (also encoded twice),
//! wrapped (`{"arguments": …}`, `{"parameters": …}`, `{"input": …}`,
//! `{"params": …}`, `{"args": …}`, `{"<tool name>": …}`) when that key is not
//! itself a declared parameter, values wrapped in a schema's shell
//! (`{"type": "object", "properties": {"city": "Paris"}}`), or a bare value
//! for a tool with exactly one required parameter.

use serde_json::{Map, Value};

use super::error::{pointer_push, short, CallError, ErrorKind, Fix, FixKind, InvalidReason};
use super::names::folds_to;
use super::rewrite::Rewriter;
use super::template;
use super::{Catalog, CompiledTool};

/// Keys models wrap arguments in.
const WRAPPERS: &[&str] = &["arguments", "parameters", "input", "params", "args"];

/// Encodings undone at most (a string in a string in a string), and
/// wrappers entered at most.
pub(crate) const MAX_DECODES: usize = 3;

/// Keys of a schema's shell that models wrap real values in
/// (`{"type": "object", "properties": {"city": "Paris"}}`).
const SHELL: &[&str] = &[
    "type",
    "properties",
    "required",
    "title",
    "description",
    "$schema",
    "additionalProperties",
];

/// True for the keys of a schema's shell that start a held wrapper
/// candidate (`type`, `properties`), as opposed to a streamed one.
pub(crate) fn is_shell_key(key: &str) -> bool {
    key == "type" || key == "properties"
}

/// True when `key`, first in the arguments, may wrap the real ones.
pub(crate) fn is_wrapper(tool: &CompiledTool, key: &str) -> bool {
    (WRAPPERS.contains(&key)
        || key == "type"
        || key == "properties"
        || key == tool.name
        || folds_to(key, &tool.folded_name))
        && !tool.props().is_some_and(|p| p.contains_key(key))
}

/// The values of a schema-shaped wrapper: `{"type": "object", "properties":
/// {…}}` whose `properties` hold values (none a schema) for at least one
/// declared parameter.
fn schema_shell(tool: &CompiledTool, m: &Map<String, Value>) -> Option<Map<String, Value>> {
    if !m.keys().all(|k| SHELL.contains(&k.as_str()))
        || m.get("type").is_some_and(|t| t != "object")
    {
        return None;
    }
    let Some(Value::Object(props)) = m.get("properties") else {
        return None;
    };
    let declared = tool.props()?;
    let values = !props.is_empty()
        && props.keys().any(|k| declared.contains_key(k))
        && !props.values().any(template::is_schema_like);
    values.then(|| props.clone())
}

/// A string holding JSON (once or more encoded) that ends in an object.
fn decode_object(s: &str) -> Option<Map<String, Value>> {
    let mut cur: Value = serde_json::from_str(s.trim()).ok()?;
    for _ in 0..MAX_DECODES {
        match cur {
            Value::Object(m) => return Some(m),
            Value::String(s) => cur = serde_json::from_str(s.trim()).ok()?,
            _ => return None,
        }
    }
    None
}

/// The end of arguments held whole: undo encodings and wrappers, wrap a
/// bare value, and run what results through a nested rewriter.
pub(crate) fn finish_held(rw: &mut Rewriter, cat: &Catalog, held: &[u8]) {
    let tool = cat.tool(rw.tool());
    let opts = cat.options();
    let text = std::str::from_utf8(held).ok();
    let parsed: Option<Value> = serde_json::from_slice(held).ok();
    let mut v = match (parsed, text) {
        (Some(v), _) => v,
        // Not JSON: a bare text.
        (None, Some(t)) => Value::String(t.trim().to_owned()),
        (None, None) => Value::String(String::from_utf8_lossy(held).trim().to_owned()),
    };
    let original_is_object = v.is_object();
    let mut changed = false;
    if opts.structure {
        for _ in 0..=MAX_DECODES {
            match &v {
                Value::String(s) => match decode_object(s) {
                    Some(m) => {
                        rw.fixes.push(Fix {
                            kind: FixKind::StringifiedArguments,
                            path: String::new(),
                            from: Some(short(&v, 60)),
                            to: None,
                        });
                        v = Value::Object(m);
                        changed = true;
                    }
                    None => break,
                },
                Value::Object(m) if schema_shell(tool, m).is_some() => {
                    let inner = schema_shell(tool, m).unwrap_or_default();
                    rw.fixes.push(Fix {
                        kind: FixKind::UnwrappedArguments,
                        path: String::new(),
                        from: Some("properties".into()),
                        to: None,
                    });
                    v = Value::Object(inner);
                    changed = true;
                }
                Value::Object(m) if m.len() == 1 => {
                    let (k, inner) = m.iter().next().expect("one member");
                    if !is_wrapper(tool, k) {
                        break;
                    }
                    let inner = match inner {
                        Value::Object(o) => o.clone(),
                        Value::String(s) => match decode_object(s) {
                            Some(o) => o,
                            None => break,
                        },
                        _ => break,
                    };
                    rw.fixes.push(Fix {
                        kind: FixKind::UnwrappedArguments,
                        path: String::new(),
                        from: Some(k.clone()),
                        to: None,
                    });
                    v = Value::Object(inner);
                    changed = true;
                }
                _ => break,
            }
        }
    }
    match v {
        Value::Object(_) => {
            if original_is_object && !changed {
                rw.nested(cat, held);
            } else {
                let text = serde_json::to_vec(&v).unwrap_or_default();
                rw.nested(cat, &text);
            }
            rw.decoded = Some(v);
        }
        Value::Null => {
            rw.output.extend_from_slice(b"{}");
            rw.fixes.push(Fix {
                kind: FixKind::MissingArguments,
                path: String::new(),
                from: Some("null".into()),
                to: Some("{}".into()),
            });
        }
        other => match tool.single_required().filter(|_| opts.structure) {
            Some(param) => {
                rw.fixes.push(Fix {
                    kind: FixKind::BareValue,
                    path: pointer_push("", param),
                    from: Some(short(&other, 60)),
                    to: None,
                });
                let mut m = Map::new();
                m.insert(param.to_owned(), other);
                let obj = Value::Object(m);
                let text = serde_json::to_vec(&obj).unwrap_or_default();
                rw.nested(cat, &text);
                rw.decoded = Some(obj);
            }
            None => {
                let mut e = CallError::new(
                    ErrorKind::InvalidArguments,
                    "",
                    "arguments must be a JSON object of parameter names and values",
                );
                e.reason = Some(InvalidReason::NotAnObject);
                e.received = Some(short(&other, 60));
                e.expected = Some("object".into());
                e.suggestion = Some("pass the arguments as an object: {\"param\": value}".into());
                rw.errors.push(e);
                rw.decoded = Some(other.clone());
                let _ = serde_json::to_writer(&mut rw.output, &other);
            }
        },
    }
}
