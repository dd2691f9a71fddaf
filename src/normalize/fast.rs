//! The fast check: a precompiled form of the common subset of JSON Schema
//! (types, `required`, string `enum`s, `items`, `additionalProperties`
//! true/false, annotations) that the arguments rewriter applies to each
//! member while it streams, so that a call that already fits its tool ends
//! without being read into a `serde_json::Value` and run through
//! `jsonschema`.
//!
//! It is one-sided: [`Fast::accepts`] true means the value is valid for
//! the schema (as `jsonschema` would judge it); false means "not known":
//! the call then goes through the full check. A schema using anything
//! outside the subset (`pattern`, `format`, ranges, lengths, unions,
//! `$ref`, …) compiles to `None` and always takes the full check.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Keywords that do not constrain a value.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "example",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$defs",
    "definitions",
];

/// One schema of the subset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fast {
    /// No constraint (`{}`); objects are not vouched for (a value that
    /// looks like a schema may be a copied template, for the full check).
    Any,
    String,
    /// A string among these.
    StringEnum(Vec<String>),
    Integer,
    Number,
    Boolean,
    Null,
    /// An array whose items meet the schema (`None`: any item but objects).
    Array(Option<Box<Fast>>),
    Object(Box<FastObject>),
}

/// An object schema of the subset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FastObject {
    /// Declared properties; `None` for one outside the subset.
    pub(crate) props: HashMap<String, Option<Fast>>,
    pub(crate) required: Vec<String>,
    pub(crate) additional: bool,
}

fn only(m: &Map<String, Value>, allowed: &[&str]) -> bool {
    m.keys()
        .all(|k| allowed.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()))
}

/// Reads an object schema's `properties`, `required` and
/// `additionalProperties` (each property compiled on its own).
pub(crate) fn object(m: &Map<String, Value>, depth: usize) -> Option<FastObject> {
    if !only(
        m,
        &["type", "properties", "required", "additionalProperties"],
    ) || m.get("type").is_some_and(|t| t != "object")
    {
        return None;
    }
    let props = match m.get("properties") {
        None => HashMap::new(),
        Some(Value::Object(p)) => p
            .iter()
            .map(|(k, s)| (k.clone(), compile(s, depth + 1)))
            .collect(),
        Some(_) => return None,
    };
    let required = match m.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let additional = match m.get("additionalProperties") {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => return None,
    };
    Some(FastObject {
        props,
        required,
        additional,
    })
}

/// Compiles `schema` to the subset, or `None` when it uses more.
pub(crate) fn compile(schema: &Value, depth: usize) -> Option<Fast> {
    if depth > 16 {
        return None;
    }
    let m = match schema {
        Value::Object(m) => m,
        Value::Bool(true) => return Some(Fast::Any),
        _ => return None,
    };
    if let Some(e) = m.get("enum") {
        // A string enum, with `type: string` or no type.
        if !only(m, &["type", "enum"]) || m.get("type").is_some_and(|t| t != "string") {
            return None;
        }
        let options = e
            .as_array()?
            .iter()
            .map(|o| o.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?;
        return Some(Fast::StringEnum(options));
    }
    let ty = match m.get("type") {
        None => return only(m, &[]).then_some(Fast::Any),
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return None,
    };
    match ty {
        "string" if only(m, &["type"]) => Some(Fast::String),
        "integer" if only(m, &["type"]) => Some(Fast::Integer),
        "number" if only(m, &["type"]) => Some(Fast::Number),
        "boolean" if only(m, &["type"]) => Some(Fast::Boolean),
        "null" if only(m, &["type"]) => Some(Fast::Null),
        "array" if only(m, &["type", "items"]) => match m.get("items") {
            None => Some(Fast::Array(None)),
            Some(is @ Value::Object(_)) => {
                Some(Fast::Array(Some(Box::new(compile(is, depth + 1)?))))
            }
            Some(_) => None,
        },
        "object" => Some(Fast::Object(Box::new(object(m, depth)?))),
        _ => None,
    }
}

impl Fast {
    /// True when `v` is valid for this schema; false when not known.
    pub(crate) fn accepts(&self, v: &Value) -> bool {
        match (self, v) {
            (Fast::Any, v) => !v.is_object(),
            (Fast::String, Value::String(_)) => true,
            (Fast::StringEnum(options), Value::String(s)) => options.iter().any(|o| o == s),
            (Fast::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (Fast::Number, Value::Number(_)) => true,
            (Fast::Boolean, Value::Bool(_)) => true,
            (Fast::Null, Value::Null) => true,
            (Fast::Array(items), Value::Array(a)) => match items {
                None => a.iter().all(|x| !x.is_object()),
                Some(is) => a.iter().all(|x| is.accepts(x)),
            },
            (Fast::Object(o), Value::Object(m)) => o.accepts(m),
            _ => false,
        }
    }

    /// True when any JSON string is valid for this schema.
    pub(crate) fn any_string(&self) -> bool {
        matches!(self, Fast::String | Fast::Any)
    }
}

impl FastObject {
    /// True when the object `m` is valid for this schema: its required
    /// keys present, each value accepted by its property's schema, and
    /// (conservatively) no undeclared key.
    pub(crate) fn accepts(&self, m: &Map<String, Value>) -> bool {
        self.required.iter().all(|r| m.contains_key(r))
            && m.iter().all(|(k, v)| {
                self.props
                    .get(k)
                    .and_then(Option::as_ref)
                    .is_some_and(|f| f.accepts(v))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_subset_compiles_and_the_rest_does_not() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "x"},
            "b": {"type": "integer"},
            "c": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "d": {"type": "string", "pattern": "^a"},
            "e": {"type": "object", "properties": {"f": {"type": "boolean"}}, "required": ["f"]}},
            "required": ["a"], "additionalProperties": false});
        let o = object(s.as_object().unwrap(), 0).unwrap();
        assert_eq!(o.props["a"], Some(Fast::String));
        assert_eq!(o.props["d"], None);
        assert!(!o.additional);
        let ok = json!({"a": "x", "b": 3, "c": ["y"], "e": {"f": true}});
        assert!(o.accepts(ok.as_object().unwrap()));
        for bad in [
            json!({"b": 3}),
            json!({"a": "x", "b": 3.0}),
            json!({"a": "x", "c": ["z"]}),
            json!({"a": "x", "d": "a"}),
            json!({"a": "x", "e": {}}),
            json!({"a": "x", "zzz": 1}),
        ] {
            assert!(!o.accepts(bad.as_object().unwrap()), "{bad}");
        }
        for s in [
            json!({"anyOf": [{"type": "string"}]}),
            json!({"$ref": "#/$defs/x"}),
            json!({"type": ["string", "null"]}),
            json!({"type": "string", "format": "date"}),
            json!({"type": "integer", "minimum": 0}),
            json!({"enum": ["a", 1]}),
        ] {
            assert_eq!(compile(&s, 0), None, "{s}");
        }
    }

    /// Soundness: whatever the subset accepts, `jsonschema` accepts.
    #[test]
    fn what_the_subset_accepts_jsonschema_accepts() {
        let schemas = [
            json!({"type": "integer"}),
            json!({"type": "number"}),
            json!({"type": "string"}),
            json!({"enum": ["a", "b"]}),
            json!({"type": "array", "items": {"type": "integer"}}),
            json!({"type": "array"}),
            json!({}),
            json!({"type": "object", "properties": {"x": {"type": "null"}}, "required": ["x"]}),
        ];
        let values = [
            json!(1),
            json!(-1),
            json!(1.5),
            json!(2.0),
            json!(u64::MAX),
            json!("a"),
            json!("c"),
            json!(null),
            json!(true),
            json!([1, 2]),
            json!([1, "a"]),
            json!([]),
            json!({"x": null}),
            json!({"x": 1}),
            json!({}),
        ];
        for s in &schemas {
            let fast = compile(s, 0).unwrap();
            let v = jsonschema::validator_for(s).unwrap();
            for x in &values {
                if fast.accepts(x) {
                    assert!(v.is_valid(x), "{s} {x}");
                }
            }
        }
    }
}
